import { describe, expect, test } from 'vitest';
import { type OidcOptions, readToggles } from '../../../sidecar/auth/method-toggles.js';
import { algorithmRefusal } from '../../../sidecar/oidc/algorithms.js';

const opts = (extra: Partial<OidcOptions> = {}): OidcOptions => ({
  ...readToggles({}).oidcOptions,
  ...extra,
});

describe('algorithmRefusal', () => {
  test.each([
    'RS256',
    'RS384',
    'RS512',
    'PS256',
    'PS384',
    'PS512',
    'ES256',
    'ES384',
    'ES512',
    'EdDSA',
    'Ed25519',
  ])('%s is accepted', (alg) => {
    expect(algorithmRefusal(alg, opts(), null)).toBeNull();
    expect(algorithmRefusal(alg, opts(), [alg])).toBeNull();
  });

  test.each([undefined, '', 7, null, ['RS256']])('alg %j: no "alg"', (alg) => {
    expect(algorithmRefusal(alg, opts(), null)).toBe('token header has no "alg"');
  });

  test.each(['none', 'NONE', 'None'])('%s is never accepted', (alg) => {
    expect(algorithmRefusal(alg, opts(), null)).toBe('unsupported algorithm none');
    expect(
      algorithmRefusal(alg, opts({ acceptNoneAlg: true, acceptUnsupportedAlg: true }), null),
    ).toBe('unsigned tokens (alg none) are never accepted as bearer tokens');
  });

  test.each(['HS256', 'HS384', 'HS512', 'hs256', 'HS1'])('%s is refused as symmetric', (alg) => {
    expect(algorithmRefusal(alg, opts({ acceptUnsupportedAlg: true }), [alg])).toBe(
      `symmetric algorithm ${JSON.stringify(alg)} is not accepted`,
    );
  });

  test.each(['RS1', 'rs256', 'ES256K', 'A128KW', 'dir', 'HS', 'xHS256', 'HS256x'])(
    '%s is refused as unsupported',
    (alg) => {
      expect(algorithmRefusal(alg, opts({ acceptUnsupportedAlg: true }), [alg])).toBe(
        `unsupported algorithm ${JSON.stringify(alg)}`,
      );
    },
  );

  test('the shown name is cut to 32 characters', () => {
    const alg = `R${'x'.repeat(40)}`;
    expect(algorithmRefusal(alg, opts(), null)).toBe(
      `unsupported algorithm ${JSON.stringify(alg.slice(0, 32))}`,
    );
  });

  test('an algorithm the provider does not advertise is refused, unless told to accept it', () => {
    expect(algorithmRefusal('RS256', opts(), ['ES256'])).toBe(
      'algorithm "RS256" is not advertised by the identity provider',
    );
    expect(algorithmRefusal('RS256', opts(), [])).not.toBeNull();
    expect(algorithmRefusal('RS256', opts({ acceptUnsupportedAlg: true }), ['ES256'])).toBeNull();
    expect(algorithmRefusal('RS256', opts(), ['ES256', 'RS256'])).toBeNull();
  });
});
