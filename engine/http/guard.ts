import type { IncomingMessage } from 'node:http';
import {
  PermissionDeniedError,
  SessionInvalidError,
  SessionMissingError,
  SessionUnauthenticatedError,
} from '../errors.js';
import { readSessionCookies } from '../sessions/cookie.js';
import type { Session } from '../sessions/store.js';
import type { EngineState } from '../state.js';
import type { StoredUser } from '../users/store.js';
import type { Access } from './route.js';

/** The session and user a call runs as, once its access rule is satisfied. */
export interface Caller {
  sessionId: string | undefined;
  session: Session | undefined;
  user: StoredUser | undefined;
}

/** Whether this call asks to keep a `KEEP_ALIVE_HEADER_ONLY` session alive. */
function asksKeepAlive(req: IncomingMessage): boolean {
  return String(req.headers.keepsessionalive ?? '').toLowerCase() === 'true';
}

/** The first of the client's session ids that names a live session. */
function liveSession(req: IncomingMessage, ids: readonly string[], state: EngineState) {
  const refresh = (s: Session) => s.keepAliveMode === 'ALL_REQUESTS' || asksKeepAlive(req);
  for (const id of ids) {
    const session = state.sessions.find(id, refresh);
    if (session) return { sessionId: id, session };
  }
  return { sessionId: undefined, session: undefined };
}

/** Resolves the caller's session and enforces `access`; throws the matching EngineError. */
export function admit(req: IncomingMessage, access: Access, state: EngineState): Caller {
  const ids = readSessionCookies(req);
  const { sessionId, session } = liveSession(req, ids, state);
  if (access === 'none') return { sessionId, session, user: undefined };
  if (ids.length === 0) throw new SessionMissingError();
  if (!session || sessionId === undefined) throw new SessionInvalidError();
  if (session.userId === null) {
    if (access === 'login') return { sessionId, session, user: undefined };
    throw new SessionUnauthenticatedError();
  }
  // Looked up on every call, so deleting or disabling a user ends their sessions at once and a
  // change of role takes effect on the next call.
  const user = state.users.byId(session.userId);
  if (!user?.enabled) {
    state.sessions.end(sessionId);
    throw new SessionInvalidError();
  }
  if (access === 'admin' && !user.admin) {
    throw new PermissionDeniedError('This call needs an administrator.');
  }
  return { sessionId, session, user };
}
