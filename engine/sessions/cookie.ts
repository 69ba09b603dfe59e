import type { IncomingMessage } from 'node:http';

/** Name of the session cookie; its value is private to the engine and may change format. */
export const SESSION_COOKIE = 'engine_session';

/** `always`/`never` force the Secure flag; `auto` sets it when the request arrived over HTTPS. */
export type CookieSecureMode = 'auto' | 'always' | 'never';

/**
 * Every session id the client sent, in order; empty when it sent none. A client that pins the
 * cookie of its first answer and also keeps a jar sends two (the Delphix .NET SDK does); like
 * Tomcat behind real engines, the caller then runs as the first one that names a live session.
 */
export function readSessionCookies(req: IncomingMessage): string[] {
  const header = req.headers.cookie;
  if (!header) return [];
  const ids: string[] = [];
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    if (part.slice(0, eq).trim() === SESSION_COOKIE) ids.push(part.slice(eq + 1).trim());
  }
  return ids;
}

/**
 * Whether the client reached us over HTTPS. TLS ends at nginx, which says so in
 * X-Forwarded-Proto. Trusting that header from anyone is safe here: a forged `https` can only
 * add the Secure flag to the forger's own cookie, never remove it from someone else's.
 */
export function servedOverHttps(req: IncomingMessage, mode: CookieSecureMode): boolean {
  if (mode !== 'auto') return mode === 'always';
  if ((req.socket as { encrypted?: boolean }).encrypted) return true;
  const proto = req.headers['x-forwarded-proto'];
  const first = (Array.isArray(proto) ? proto[0] : proto)?.split(',')[0]?.trim().toLowerCase();
  return first === 'https';
}

const ATTRIBUTES = 'Path=/; HttpOnly; SameSite=Strict';

/** A Set-Cookie value carrying a session id; no Max-Age: the engine expires idle sessions. */
export function sessionCookie(id: string, secure: boolean): string {
  return `${SESSION_COOKIE}=${id}; ${ATTRIBUTES}${secure ? '; Secure' : ''}`;
}

/** A Set-Cookie value that makes the client drop its session cookie. */
export function clearedSessionCookie(secure: boolean): string {
  return `${SESSION_COOKIE}=; ${ATTRIBUTES}; Max-Age=0${secure ? '; Secure' : ''}`;
}
