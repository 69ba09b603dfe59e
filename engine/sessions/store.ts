import { createHash, randomBytes } from 'node:crypto';
import { SessionLimitError } from '../errors.js';
import type { ApiVersion } from '../versions.js';

/** `ALL_REQUESTS`: every call refreshes the idle timer; the other: only calls with `KeepSessionAlive`. */
export type KeepAliveMode = 'ALL_REQUESTS' | 'KEEP_ALIVE_HEADER_ONLY';

/** One live session; it exists only in this process's memory. */
export interface Session {
  /** The version this session speaks: the requested one, capped at the native minor. */
  readonly version: ApiVersion;
  /** The engine's native version for the session's major, as returned when it opened. */
  readonly native: ApiVersion;
  readonly locale: string;
  /** The logged-in user's id, or null before login. */
  userId: number | null;
  /** Set by the login: whether every call keeps the session alive, or only calls that ask. */
  keepAliveMode: KeepAliveMode;
  lastSeen: number;
}

export interface SessionStoreOptions {
  idleMs: number;
  maxSessions: number;
  now: () => number;
}

// 256 random bits, base64url: 43 characters.
const ID_BYTES = 32;
const ID_PATTERN = /^[A-Za-z0-9_-]{43}$/;

function keyOf(id: string): string {
  // Only a hash of each id is held, so a heap dump does not hand out live cookies.
  return createHash('sha256').update(id).digest('base64url');
}

/** In-memory sessions with idle expiry and a cap; ids are random and never reused. */
export class SessionStore {
  // A Map iterates in insertion order; every touch re-inserts, so the first entries are the
  // least recently used and expiry only ever has to look at the front.
  private readonly sessions = new Map<string, Session>();

  constructor(private readonly options: SessionStoreOptions) {}

  get size(): number {
    this.sweep();
    return this.sessions.size;
  }

  /** Opens a session; throws SessionLimitError when the cap is reached. */
  create(init: Omit<Session, 'lastSeen' | 'userId' | 'keepAliveMode'>): {
    id: string;
    session: Session;
  } {
    const now = this.sweep();
    if (this.sessions.size >= this.options.maxSessions) {
      throw new SessionLimitError(this.options.maxSessions, this.secondsUntilOneExpires(now));
    }
    const session: Session = {
      ...init,
      userId: null,
      keepAliveMode: 'ALL_REQUESTS',
      lastSeen: now,
    };
    const id = randomBytes(ID_BYTES).toString('base64url');
    this.sessions.set(keyOf(id), session);
    return { id, session };
  }

  /**
   * The live session named by `id`; undefined when unknown or expired. It is marked as used now
   * unless `refresh` says this call does not keep it alive.
   */
  find(id: string, refresh: (session: Session) => boolean = () => true): Session | undefined {
    const now = this.sweep();
    if (!ID_PATTERN.test(id)) return undefined;
    const key = keyOf(id);
    const session = this.sessions.get(key);
    if (!session) return undefined;
    if (!refresh(session)) return session;
    session.lastSeen = now;
    this.sessions.delete(key);
    this.sessions.set(key, session);
    return session;
  }

  /** Moves a session to a fresh id; the old id stops working at once. Undefined if it ended. */
  rotate(oldId: string): string | undefined {
    const oldKey = keyOf(oldId);
    const session = this.sessions.get(oldKey);
    if (!session) return undefined;
    this.sessions.delete(oldKey);
    const id = randomBytes(ID_BYTES).toString('base64url');
    this.sessions.set(keyOf(id), session);
    return id;
  }

  /** Ends a session; unknown ids are ignored. */
  end(id: string): void {
    this.sessions.delete(keyOf(id));
  }

  private sweep(): number {
    const now = this.options.now();
    for (const [key, session] of this.sessions) {
      if (now - session.lastSeen < this.options.idleMs) break;
      this.sessions.delete(key);
    }
    return now;
  }

  private secondsUntilOneExpires(now: number): number {
    const oldest = this.sessions.values().next();
    if (oldest.done) return 1;
    return Math.max(1, Math.ceil((oldest.value.lastSeen + this.options.idleMs - now) / 1000));
  }
}
