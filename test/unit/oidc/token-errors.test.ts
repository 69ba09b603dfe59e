import { describe, expect, test } from 'vitest';
import { describeTokenError } from '../../../sidecar/oidc/token-errors.js';

const err = (fields: Record<string, unknown>) => Object.assign(new Error('m'), fields);

describe('describeTokenError', () => {
  test.each([
    [{ code: 'ERR_JWT_EXPIRED' }, 'token expired'],
    [
      { code: 'ERR_JWT_CLAIM_VALIDATION_FAILED', reason: 'missing', claim: 'exp' },
      'missing required "exp" claim',
    ],
    [{ code: 'ERR_JWT_CLAIM_VALIDATION_FAILED', claim: 'nbf' }, 'token not yet valid'],
    [{ code: 'ERR_JWT_CLAIM_VALIDATION_FAILED', claim: 'iss' }, 'unexpected "iss" claim value'],
    [{ code: 'ERR_JWT_CLAIM_VALIDATION_FAILED', claim: 'aud' }, 'unexpected "aud" claim value'],
    [{ code: 'ERR_JWT_CLAIM_VALIDATION_FAILED', claim: 'sub', message: 'odd sub' }, 'odd sub'],
    [{ code: 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED' }, 'signature verification failed'],
    [{ code: 'ERR_JWS_INVALID', message: 'bad b64' }, 'malformed token (bad b64)'],
    [{ code: 'ERR_JWT_INVALID', message: 'not JSON' }, 'malformed token (not JSON)'],
    [{ code: 'ERR_JOSE_ALG_NOT_ALLOWED' }, 'unsupported algorithm'],
    [{ code: 'ERR_JOSE_NOT_SUPPORTED', message: 'crit' }, 'unsupported token (crit)'],
    [{ code: 'ERR_JWK_INVALID' }, 'the identity provider key for this token is unusable'],
    [{ code: 'ERR_JWKS_INVALID' }, 'the identity provider key for this token is unusable'],
  ])('%j: %s', (fields, text) => {
    expect(describeTokenError(err(fields))).toBe(text);
  });

  test('without a usable message the text is generic', () => {
    expect(describeTokenError({ code: 'ERR_JWT_CLAIM_VALIDATION_FAILED', claim: 'x' })).toBe(
      'invalid claim',
    );
    expect(describeTokenError({ code: 'ERR_JWS_INVALID', message: 5 })).toBe(
      'malformed token (invalid JWT)',
    );
    expect(describeTokenError({ code: 'ERR_JOSE_NOT_SUPPORTED' })).toBe(
      'unsupported token (not supported)',
    );
  });

  test('a missing nbf is reported as missing, not as not yet valid', () => {
    expect(
      describeTokenError({
        code: 'ERR_JWT_CLAIM_VALIDATION_FAILED',
        reason: 'missing',
        claim: 'nbf',
      }),
    ).toBe('missing required "nbf" claim');
  });

  test.each([[new Error('boom')], [{ code: 'ERR_OTHER' }], [null], [undefined], ['text']])(
    'anything else (%j) is unrecognised',
    (value) => {
      expect(describeTokenError(value ?? {})).toBeNull();
    },
  );
});
