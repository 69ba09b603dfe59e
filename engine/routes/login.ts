import { AlreadyAuthenticatedError, LoginFailedError, SessionInvalidError } from '../errors.js';
import type { CallContext, RouteSpec } from '../http/route.js';
import { LOGIN_REQUEST } from '../schema/records.js';
import { sessionCookie } from '../sessions/cookie.js';
import type { KeepAliveMode } from '../sessions/store.js';
import type { LoginTarget } from '../users/store.js';
import { userRecord } from '../users/wire.js';

async function login(ctx: CallContext) {
  const session = ctx.session!;
  if (session.userId !== null) throw new AlreadyAuthenticatedError();
  const { username, password, target, keepAliveMode } = ctx.body as {
    username: string;
    password: string;
    target: LoginTarget;
    keepAliveMode: KeepAliveMode;
  };
  const user = await ctx.state.users.authenticate(username, target, password);
  if (!user) throw new LoginFailedError();
  // A new id on every privilege change, so a session id seen before login is worthless after.
  const id = ctx.state.sessions.rotate(ctx.sessionId!);
  if (id === undefined) throw new SessionInvalidError();
  session.userId = user.id;
  session.keepAliveMode = keepAliveMode;
  ctx.setCookie = sessionCookie(id, ctx.secure);
  return { type: 'LoginResult', user: userRecord(user) };
}

/** Login, and a look at who is calling. */
export const loginRoutes: readonly RouteSpec[] = [
  {
    method: 'POST',
    path: '/resources/json/service/login',
    summary:
      'Logs the session in with a password. Sets a new session cookie; the previous one stops working. The only call an unauthenticated session may make.',
    access: 'login',
    body: { record: LOGIN_REQUEST, mode: 'create' },
    result: 'LoginResult',
    handler: login,
  },
  {
    method: 'GET',
    path: '/resources/json/service/whoami',
    summary:
      'Returns the logged-in user and, behind the gateway, the API client it authenticated (X-Client-* headers).',
    access: 'user',
    result: 'Identity',
    handler: (ctx) => ({ type: 'Identity', user: userRecord(ctx.user!), gateway: ctx.gateway }),
  },
];
