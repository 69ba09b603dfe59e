import { LUA_ANSWERS } from '../../common/gateway-errors.js';
import type { Identity } from '../clients/store/api-client.js';
import type { KeyRecord } from './key-record.js';

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
  | 'UNKNOWN_CLIENT'
  | 'API_CLIENT_EXPIRED';

export type AuthFailure = {
  ok: false;
  code: AuthFailureCode;
  message: string;
  /** The scheme the caller tried, when there was one. */
  scheme?: AuthScheme;
  /** Text for `X-jwt-error` (bearer failures only). */
  jwtError?: string;
  /** The API client the credential named, when it names one that exists (failure counts). */
  clientRow?: number;
  /** What nginx may keep about the API key id the caller named (apk only). */
  keyRecord?: KeyRecord;
};

/** The answer of every verifier: a value, never an exception (those mean infrastructure faults). */
export type AuthDecision =
  | {
      ok: true;
      identity: Identity;
      method: AuthScheme;
      /**
       * Unix time (s) after which this answer no longer holds: the earliest of a token's
       * `exp`, the client's `expires_at` and, for a rotated-out secret, its grace end. None: open.
       */
      validUntil?: number;
      /** What nginx may keep about the API key id (apk only). */
      keyRecord?: KeyRecord;
    }
  | AuthFailure;

export function refuse(
  code: AuthFailureCode,
  message: string,
  extra: Partial<Pick<AuthFailure, 'scheme' | 'jwtError'>> = {},
): AuthFailure {
  return { ok: false, code, message, ...extra };
}

/** Refusal of a right credential whose client has expired: like a deleted one, own code. */
export function expiredRefusal(clientRow: number, scheme: AuthScheme): AuthFailure {
  return {
    ...refuse('API_CLIENT_EXPIRED', LUA_ANSWERS.apiClientExpired.message, {
      scheme,
      ...(scheme === 'bearer' ? { jwtError: 'the API client has expired' } : {}),
    }),
    clientRow,
  };
}

/**
 * The earliest of these times (Unix ms), as whole Unix seconds rounded down, so a decision
 * kept until then never outlives any of them; undefined when none is given.
 */
export function validUntil(times: readonly (number | undefined)[]): number | undefined {
  const given = times.filter((t): t is number => t !== undefined);
  return given.length === 0 ? undefined : Math.floor(Math.min(...given) / 1000);
}
