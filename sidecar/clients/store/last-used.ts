import type { Clock } from '../../clock.js';
import { SerialFlush } from '../../db/serial-flush.js';
import type { Logger } from '../../log.js';
import type { ClientStore } from './writes.js';

/** last_used_at is written at most this often per client (and per sidecar). */
export const LAST_USED_INTERVAL_MS = 60_000;

/**
 * Uses waiting to be written go out together this often: a stream of first sights (each a
 * different client) costs one UPDATE a second, not one each beside its look-up.
 */
export const LAST_USED_FLUSH_MS = 1_000;

/**
 * Records when clients authenticate without a write per request: a client is written when this
 * sidecar has not written it for a minute, in a batch sent at most a second after the request
 * was answered (off the /auth path; a failed write is logged and tried again on the next use).
 * The database skips a client another sidecar wrote less than a minute ago. Decisions nginx
 * answers from its cache never reach the sidecar, but they live at most
 * `auth_cache.max_age_ms` (30 s): a client in use is seen here at least that often, so
 * last_used_at is late by at most a minute and a half.
 */
// An AuthObserver (sidecar/auth/auth-observer.ts) by its shape, not by name: the client store sits
// below auth, which reads clients from it.
export class LastUsedRecorder {
  /** Client id → when this sidecar last wrote (or queued) it. Entries older than a minute go. */
  private readonly written = new Map<number, number>();
  private pending = new Set<number>();
  private readonly flusher: SerialFlush;
  private readonly sweeper: NodeJS.Timeout;

  constructor(
    private readonly store: Pick<ClientStore, 'touchLastUsed'>,
    private readonly log: Logger,
    private readonly now: Clock = Date.now,
  ) {
    this.flusher = new SerialFlush(() => this.write(), LAST_USED_FLUSH_MS);
    this.flusher.start();
    this.sweeper = setInterval(() => this.sweep(), LAST_USED_INTERVAL_MS);
    this.sweeper.unref();
  }

  accepted(identity: { id: number }): void {
    const now = this.now();
    const last = this.written.get(identity.id);
    if (last !== undefined && now - last < LAST_USED_INTERVAL_MS) return;
    this.written.set(identity.id, now);
    this.pending.add(identity.id);
  }

  refused(): void {}

  /** Writes the uses queued so far, without waiting for the timer (tests). */
  flush(): Promise<void> {
    return this.flusher.run();
  }

  /** Stops the timers and writes what is left. */
  close(): Promise<void> {
    clearInterval(this.sweeper);
    return this.flusher.close();
  }

  private async write(): Promise<void> {
    if (this.pending.size === 0) return;
    const ids = [...this.pending];
    this.pending = new Set();
    try {
      await this.store.touchLastUsed(ids, new Date(this.now()), LAST_USED_INTERVAL_MS);
    } catch (err) {
      // Not written: forget them, so their next use tries again.
      for (const id of ids) this.written.delete(id);
      this.log.warn('could not record the last use of API clients', {
        clients: ids.length,
        error: (err as Error).message,
      });
    }
  }

  /** An entry older than the interval means what no entry means: memory stays bounded. */
  private sweep(): void {
    const now = this.now();
    for (const [id, at] of this.written) {
      if (now - at >= LAST_USED_INTERVAL_MS) this.written.delete(id);
    }
  }
}
