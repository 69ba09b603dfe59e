import { LUA_ANSWERS } from '../../common/gateway-errors.js';
import { type AuthFailure, type AuthScheme, refuse } from './decision.js';

export type Credential = { ok: true; scheme: AuthScheme; value: string } | AuthFailure;

/** Every `Authorization` value as sent; Node keeps only the first in `req.headers`. */
export function authorizationValues(rawHeaders: string[]): string[] {
  const values: string[] = [];
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i]!;
    // The length test only spares a toLowerCase per header on the hot path; equal lower-case
    // text has equal length, so dropping it changes nothing.
    // Stryker disable next-line ConditionalExpression: equivalent, see the line above
    if (name.length === 13 && name.toLowerCase() === 'authorization') {
      values.push(rawHeaders[i + 1]!);
    }
  }
  return values;
}

// A Map, not an object literal: `SCHEMES['constructor']` would find Object's prototype.
const SCHEMES = new Map<string, AuthScheme>([
  ['apk', 'apk'],
  ['bearer', 'bearer'],
]);

/** "Bearer" (any case) alone or before whitespace: the caller meant a token, whatever follows. */
const BEARER_ATTEMPT = /^bearer(?:\s|$)/i;

/**
 * A bearer attempt without one clean token. It names its scheme so the refusal carries
 * `X-jwt-error` like every other refused token (spec 5.3.6); nginx trims trailing spaces, so
 * "Bearer " arrives as "Bearer".
 */
function malformedBearer(header: string): AuthFailure {
  const missing = header.slice(6).trim() === '';
  return refuse(
    'MALFORMED_CREDENTIALS',
    'The Authorization header must be "Bearer <token>", one token without whitespace.',
    { scheme: 'bearer', jwtError: missing ? 'missing token' : 'malformed Authorization header' },
  );
}

/**
 * Splits `Authorization: <scheme> <value>`. The scheme is matched case-insensitively
 * (RFC 9110 §11.1); the value must be one token without whitespace.
 */
export function parseCredential(values: string[]): Credential {
  if (values.length === 0) {
    return refuse('MISSING_CREDENTIALS', LUA_ANSWERS.missingCredentials.message);
  }
  if (values.length > 1) {
    return refuse(
      'MULTIPLE_CREDENTIALS',
      'The request carries more than one Authorization header.',
    );
  }
  const header = values[0]!;
  const match = /^([A-Za-z][A-Za-z0-9!#$%&'*+.^_`|~-]*) +(\S+)$/.exec(header);
  if (!match) {
    if (BEARER_ATTEMPT.test(header)) return malformedBearer(header);
    return refuse(
      'MALFORMED_CREDENTIALS',
      'The Authorization header must be "<scheme> <credential>" (for example "apk <id>.<secret>").',
    );
  }
  const scheme = SCHEMES.get(match[1]!.toLowerCase());
  if (!scheme) {
    return refuse('UNSUPPORTED_SCHEME', 'Only the "apk" and "Bearer" schemes are accepted.');
  }
  return { ok: true, scheme, value: match[2]! };
}
