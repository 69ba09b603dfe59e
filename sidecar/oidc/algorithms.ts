import type { OidcOptions } from '../auth/method-toggles.js';
import { SCHEMES } from './jws.js';

/**
 * Asymmetric JWS algorithms (jws.ts verifies each). Anything else is refused before a key is
 * looked at: `none` proves nothing, and an HMAC (`HS*`) "verified" with a provider's *public*
 * key would let anyone who read that key forge tokens.
 */
const ASYMMETRIC = new Set(Object.keys(SCHEMES));

/** Why `alg` may not be used, or null when it may. */
export function algorithmRefusal(
  alg: unknown,
  options: OidcOptions,
  advertised: readonly string[] | null,
): string | null {
  if (typeof alg !== 'string' || alg === '') return 'token header has no "alg"';
  const shown = JSON.stringify(alg.slice(0, 32));
  if (alg.toLowerCase() === 'none') {
    // Even with accept_none_alg true: a bearer token comes from the caller, not from the
    // provider over TLS, so an unsigned one proves nothing (see the OIDC decision record).
    return options.acceptNoneAlg
      ? 'unsigned tokens (alg none) are never accepted as bearer tokens'
      : 'unsupported algorithm none';
  }
  if (/^HS\d+$/i.test(alg)) return `symmetric algorithm ${shown} is not accepted`;
  if (!ASYMMETRIC.has(alg)) return `unsupported algorithm ${shown}`;
  if (advertised !== null && !options.acceptUnsupportedAlg && !advertised.includes(alg)) {
    return `algorithm ${shown} is not advertised by the identity provider`;
  }
  return null;
}
