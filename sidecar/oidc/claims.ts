import type { JWTPayload } from 'jose';
import { jsonObject } from './jws.js';

/** What a verified token's claims are held to. */
export interface ClaimRules {
  /** The provider's `issuer`: `iss` must equal it. */
  readonly issuer: string;
  /** When set, `aud` must be it or a list holding it. */
  readonly audience: string | null;
  /** Seconds of clock difference forgiven on `exp`, `nbf` and `iat`. */
  readonly toleranceSeconds: number;
  readonly nowMs: number;
}

export type CheckedClaims = { ok: true; claims: JWTPayload } | { ok: false; reason: string };

const refused = (reason: string): CheckedClaims => ({ ok: false, reason });

/**
 * RFC 7519 §4.1 for a bearer token, with the texts and the order jose's `jwtVerify` had (the
 * first failing check names the refusal): the payload a JSON object; `iss`, then `aud` when an
 * audience is set, then `exp` present; `iss` and `aud` as expected; `iat`, `nbf` and `exp`
 * numbers (`nbf` otherwise "not yet valid"); `nbf` not after now, `exp` after now, each within the tolerance. Then what jose did
 * not check: `iat` not in the future (no `iat` counts as issued long ago).
 */
export function checkClaims(payload: Buffer, rules: ClaimRules): CheckedClaims {
  const claims = jsonObject(payload);
  if (claims === null) {
    return refused('malformed token (JWT Claims Set must be a top-level JSON object)');
  }
  const required = rules.audience !== null ? ['iss', 'aud', 'exp'] : ['iss', 'exp'];
  const missing = required.find((claim) => !Object.hasOwn(claims, claim));
  if (missing !== undefined) return refused(`missing required "${missing}" claim`);
  if (claims.iss !== rules.issuer) return refused('unexpected "iss" claim value');
  if (rules.audience !== null && !hasAudience(claims.aud, rules.audience)) {
    return refused('unexpected "aud" claim value');
  }
  const now = Math.floor(rules.nowMs / 1000);
  const tolerance = rules.toleranceSeconds;
  const notNumber = (claim: string) =>
    Object.hasOwn(claims, claim) && typeof claims[claim] !== 'number';
  if (notNumber('iat')) return refused('"iat" claim must be a number');
  // One text for an `nbf` that is not a number and one in the future, as before; a missing
  // `nbf` compares false.
  if (notNumber('nbf') || (claims.nbf as number) > now + tolerance) {
    return refused('token not yet valid');
  }
  if (notNumber('exp')) return refused('"exp" claim must be a number');
  if ((claims.exp as number) <= now - tolerance) return refused('token expired');
  if (((claims.iat as number | undefined) ?? 0) > rules.nowMs / 1000 + tolerance) {
    return refused('token issued in the future ("iat")');
  }
  return { ok: true, claims: claims as JWTPayload };
}

function hasAudience(aud: unknown, audience: string): boolean {
  return typeof aud === 'string' ? aud === audience : Array.isArray(aud) && aud.includes(audience);
}
