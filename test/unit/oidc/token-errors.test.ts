import { describe, expect, test } from 'vitest';
import { describeTokenError } from '../../../sidecar/oidc/token-errors.js';

const err = (fields: Record<string, unknown>) => Object.assign(new Error('m'), fields);

describe('describeTokenError', () => {
  test.each([
    [{ code: 'ERR_JOSE_NOT_SUPPORTED', message: 'alg' }, 'unsupported token (alg)'],
    [{ code: 'ERR_JWK_INVALID' }, 'the identity provider key for this token is unusable'],
    [{ code: 'ERR_JWKS_INVALID' }, 'the identity provider key for this token is unusable'],
  ])('%j: %s', (fields, text) => {
    expect(describeTokenError(err(fields))).toBe(text);
  });

  test('without a usable message the text is generic', () => {
    expect(describeTokenError({ code: 'ERR_JOSE_NOT_SUPPORTED', message: 5 })).toBe(
      'unsupported token (not supported)',
    );
    expect(describeTokenError({ code: 'ERR_JOSE_NOT_SUPPORTED' })).toBe(
      'unsupported token (not supported)',
    );
  });

  test.each([
    [new Error('boom')],
    [{ code: 'ERR_OTHER' }],
    // What jwtVerify threw: jws.ts and claims.ts answer those themselves now.
    [{ code: 'ERR_JWT_EXPIRED' }],
    [{ code: 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED' }],
    [null],
    [undefined],
    ['text'],
  ])('anything else (%j) is unrecognised', (value) => {
    expect(describeTokenError(value ?? {})).toBeNull();
  });
});
