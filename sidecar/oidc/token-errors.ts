/**
 * The `X-jwt-error` text for what jose throws while it picks and imports the provider's key for
 * a token (key-set.ts), branching on `err.code` (jose's stable API). jws.ts and claims.ts give
 * their own texts. Null for anything unrecognised: the caller logs it and refuses with a
 * generic text.
 */
export function describeTokenError(err: unknown): string | null {
  const { code, message } = err as { code?: unknown; message?: unknown };
  switch (code) {
    case 'ERR_JOSE_NOT_SUPPORTED':
      return `unsupported token (${typeof message === 'string' ? message : 'not supported'})`;
    case 'ERR_JWK_INVALID':
    case 'ERR_JWKS_INVALID':
      return 'the identity provider key for this token is unusable';
    default:
      return null;
  }
}
