import type { Identity } from '../clients/api-client.js';

export type AuthScheme = 'apk' | 'bearer';

/** Why a request is refused. Unknown, wrong and deleted keys share one code on purpose. */
export type AuthFailureCode =
  | 'MISSING_CREDENTIALS'
  | 'MULTIPLE_CREDENTIALS'
  | 'MALFORMED_CREDENTIALS'
  | 'UNSUPPORTED_SCHEME'
  | 'METHOD_DISABLED'
  | 'NO_METHOD_ENABLED'
  | 'INVALID_API_KEY'
  | 'INVALID_TOKEN'
  | 'UNKNOWN_CLIENT';

export type AuthFailure = {
  ok: false;
  code: AuthFailureCode;
  message: string;
  /** The scheme the caller tried, when there was one. */
  scheme?: AuthScheme;
  /** Text for `X-jwt-error` (bearer failures only). */
  jwtError?: string;
};

/** The answer of every verifier: a value, never an exception (those mean infrastructure faults). */
export type AuthDecision =
  | {
      ok: true;
      identity: Identity;
      method: AuthScheme;
      /** Unix time (s) after which this answer no longer holds (a token's `exp`); none: open. */
      validUntil?: number;
    }
  | AuthFailure;

export function refuse(
  code: AuthFailureCode,
  message: string,
  extra: Partial<Pick<AuthFailure, 'scheme' | 'jwtError'>> = {},
): AuthFailure {
  return { ok: false, code, message, ...extra };
}
