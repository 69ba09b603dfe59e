/**
 * The `X-jwt-error` text for a jose failure, branching on `err.code` (jose's stable API).
 * Null for anything unrecognised: the caller logs it and refuses with a generic text.
 */
export function describeTokenError(err: unknown): string | null {
  const { code, claim, reason, message } = err as {
    code?: unknown;
    claim?: unknown;
    reason?: unknown;
    message?: unknown;
  };
  switch (code) {
    case 'ERR_JWT_EXPIRED':
      return 'token expired';
    case 'ERR_JWT_CLAIM_VALIDATION_FAILED':
      if (reason === 'missing') return `missing required ${JSON.stringify(claim)} claim`;
      if (claim === 'nbf') return 'token not yet valid';
      if (claim === 'iss') return 'unexpected "iss" claim value';
      if (claim === 'aud') return 'unexpected "aud" claim value';
      return typeof message === 'string' ? message : 'invalid claim';
    case 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED':
      return 'signature verification failed';
    case 'ERR_JWS_INVALID':
    case 'ERR_JWT_INVALID':
      return `malformed token (${typeof message === 'string' ? message : 'invalid JWT'})`;
    case 'ERR_JOSE_ALG_NOT_ALLOWED':
      return 'unsupported algorithm';
    case 'ERR_JOSE_NOT_SUPPORTED':
      return `unsupported token (${typeof message === 'string' ? message : 'not supported'})`;
    case 'ERR_JWK_INVALID':
    case 'ERR_JWKS_INVALID':
      return 'the identity provider key for this token is unusable';
    default:
      return null;
  }
}
