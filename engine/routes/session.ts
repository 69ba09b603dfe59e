import { UnsupportedVersionError } from '../errors.js';
import type { CallContext, RouteSpec } from '../http/route.js';
import { API_SESSION, normaliseLocale } from '../schema/records.js';
import { clearedSessionCookie, sessionCookie } from '../sessions/cookie.js';
import type { Session } from '../sessions/store.js';
import { type ApiVersion, sessionVersion } from '../versions.js';

const PATH = '/resources/json/service/session';

function sessionRecord(session: Session) {
  return {
    type: 'APISession',
    version: { type: 'APIVersion', ...session.native },
    locale: session.locale,
    client: null,
  };
}

function open(ctx: CallContext) {
  const body = ctx.body as { version: ApiVersion; locale?: string };
  const { sessions, settings } = ctx.state;
  const requested = {
    major: body.version.major,
    minor: body.version.minor,
    micro: body.version.micro,
  };
  const native = settings.versions.find((v) => v.major === requested.major);
  if (!native) {
    throw new UnsupportedVersionError(
      requested.major,
      settings.versions.map((v) => v.major),
    );
  }
  // One cookie names one session: opening another replaces the caller's current one, which
  // also keeps a client that re-negotiates from piling up sessions against the cap.
  if (ctx.sessionId !== undefined) sessions.end(ctx.sessionId);
  const { id, session } = sessions.create({
    version: sessionVersion(requested, native),
    native,
    locale: body.locale === undefined ? settings.defaultLocale : normaliseLocale(body.locale),
  });
  ctx.version = session.version;
  ctx.setCookie = sessionCookie(id, ctx.secure);
  return sessionRecord(session);
}

function end(ctx: CallContext) {
  const session = ctx.session!;
  ctx.state.sessions.end(ctx.sessionId!);
  ctx.setCookie = clearedSessionCookie(ctx.secure);
  return sessionRecord(session);
}

/** Opening, reading and ending sessions. */
export const sessionRoutes: readonly RouteSpec[] = [
  {
    method: 'POST',
    path: PATH,
    summary:
      "Opens a session at the requested API version; the result holds the native version of that major, and the session cookie is set. Replaces the caller's current session, if any.",
    access: 'none',
    body: { record: API_SESSION, mode: 'create' },
    result: 'APISession',
    handler: open,
  },
  {
    method: 'GET',
    path: PATH,
    summary:
      'Returns the current session. Without a logged-in session the refusal is an ErrorResult with HTTP 200, so a client can ask whether it has a session.',
    access: 'user',
    probe: true,
    result: 'APISession',
    handler: (ctx) => sessionRecord(ctx.session!),
  },
  {
    method: 'DELETE',
    path: PATH,
    summary: 'Ends the current session (logout) and clears the cookie.',
    access: 'user',
    result: 'APISession',
    handler: end,
  },
  {
    method: 'POST',
    path: '/resources/json/service/logout',
    summary: 'Ends the current session and clears the cookie; the same as DELETE on the session.',
    access: 'user',
    result: 'APISession',
    handler: end,
  },
];
