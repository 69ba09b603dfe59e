import type { IncomingMessage } from 'node:http';
import {
  PermissionDeniedError,
  SessionInvalidError,
  SessionMissingError,
  SessionUnauthenticatedError,
} from '../errors.js';
import { readSessionCookie } from '../sessions/cookie.js';
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

/** Resolves the caller's session and enforces `access`; throws the matching EngineError. */
export function admit(req: IncomingMessage, access: Access, state: EngineState): Caller {
  const cookie = readSessionCookie(req);
  const session = cookie === undefined ? undefined : state.sessions.find(cookie);
  const sessionId = session ? cookie : undefined;
  if (access === 'none') return { sessionId, session, user: undefined };
  if (cookie === undefined) throw new SessionMissingError();
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
