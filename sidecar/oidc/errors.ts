/**
 * Faults met while talking to an OpenID Connect provider. They never escape the verifier:
 * it turns each into a refusal whose `X-jwt-error` is the error's message, so every message
 * here is short, ASCII and free of internal detail (no host names, no stack).
 */
export class OidcError extends Error {
  readonly code: string = 'ERR_OIDC';
}

/** Discovery or the key set could not be fetched or made no sense; fail closed. */
export class ProviderError extends OidcError {
  override readonly code = 'ERR_OIDC_PROVIDER';
}

/** The key set holds no key for the token's `kid`/`alg`, even after a (rate-limited) refetch. */
export class KeyNotFoundError extends OidcError {
  override readonly code = 'ERR_OIDC_KEY_NOT_FOUND';
}
