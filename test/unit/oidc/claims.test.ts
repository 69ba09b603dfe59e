import { describe, expect, test } from 'vitest';
import { type ClaimRules, checkClaims } from '../../../sidecar/oidc/claims.js';

const NOW = 1_800_000_000;
const ISS = 'https://idp.example';
const RULES: ClaimRules = {
  issuer: ISS,
  audience: null,
  toleranceSeconds: 30,
  // Half a second into NOW: `exp`/`nbf` compare whole seconds, `iat` the exact time.
  nowMs: NOW * 1000 + 500,
};
const GOOD = { iss: ISS, exp: NOW + 600, iat: NOW, sub: 'robot@idp' };

function outcome(claims: unknown, rules: Partial<ClaimRules> = {}): string {
  const checked = checkClaims(Buffer.from(JSON.stringify(claims)), { ...RULES, ...rules });
  return checked.ok ? 'accepted' : checked.reason;
}

describe('checkClaims', () => {
  test('good claims: accepted, handed back as they are', () => {
    const checked = checkClaims(Buffer.from(JSON.stringify(GOOD)), RULES);
    expect(checked).toEqual({ ok: true, claims: GOOD });
  });

  test.each([
    ['an array', [GOOD]],
    ['null', null],
    ['a number', 5],
    ['a string', 'claims'],
  ])('a payload that is %s: refused', (_what, payload) => {
    expect(outcome(payload)).toBe(
      'malformed token (JWT Claims Set must be a top-level JSON object)',
    );
  });

  test('a payload that is not JSON, or not UTF-8: refused', () => {
    const notUtf8 = Buffer.concat([
      Buffer.from('{"sub":"'),
      Buffer.from([0xc3]),
      Buffer.from('"}'),
    ]);
    for (const bytes of [Buffer.from('{"iss":'), Buffer.from([0x7b, 0xff, 0x7d]), notUtf8]) {
      expect(checkClaims(bytes, RULES)).toEqual({
        ok: false,
        reason: 'malformed token (JWT Claims Set must be a top-level JSON object)',
      });
    }
  });

  test.each([
    ['iss', { exp: NOW + 600 }],
    ['exp', { iss: ISS }],
    // `iss` is named first when both are missing, as jose named it.
    ['iss', {}],
  ])('missing %s: refused, naming it', (claim, claims) => {
    expect(outcome(claims)).toBe(`missing required "${claim}" claim`);
  });

  test('a claim that is present but null counts as present', () => {
    expect(outcome({ ...GOOD, iss: null })).toBe('unexpected "iss" claim value');
    expect(outcome({ ...GOOD, exp: null })).toBe('"exp" claim must be a number');
  });

  test('another issuer: refused; the issuer compared exactly', () => {
    expect(outcome({ ...GOOD, iss: 'https://evil.example' })).toBe('unexpected "iss" claim value');
    expect(outcome({ ...GOOD, iss: `${ISS}/` })).toBe('unexpected "iss" claim value');
    expect(outcome({ ...GOOD, iss: [ISS] })).toBe('unexpected "iss" claim value');
  });

  describe('the audience, when one is set', () => {
    const aud = { audience: 'gateway' };
    test.each([
      ['the same string', 'gateway', 'accepted'],
      ['a list holding it', ['x', 'gateway'], 'accepted'],
      ['another string', 'other', 'unexpected "aud" claim value'],
      ['a list without it', ['x', 'y'], 'unexpected "aud" claim value'],
      ['an empty list', [], 'unexpected "aud" claim value'],
      ['a number', 5, 'unexpected "aud" claim value'],
      ['an object', { gateway: true }, 'unexpected "aud" claim value'],
    ])('%s: %s', (_what, value, expected) => {
      expect(outcome({ ...GOOD, aud: value }, aud)).toBe(expected);
    });

    test('missing: refused, before `exp` and after `iss`', () => {
      expect(outcome(GOOD, aud)).toBe('missing required "aud" claim');
      expect(outcome({ iss: ISS }, aud)).toBe('missing required "aud" claim');
      expect(outcome({ aud: 'gateway' }, aud)).toBe('missing required "iss" claim');
    });

    test('checked after the issuer', () => {
      expect(outcome({ ...GOOD, iss: 'x', aud: 'y' }, aud)).toBe('unexpected "iss" claim value');
    });
  });

  test('no audience set: `aud` is not looked at', () => {
    expect(outcome({ ...GOOD, aud: 5 })).toBe('accepted');
  });

  test.each([
    ['iat', { iat: '1' }],
    ['exp', { exp: '1' }],
    ['iat', { iat: true, nbf: 'x', exp: 'x' }],
    ['exp', { nbf: 1, exp: {} }],
  ])('a %s that is not a number: refused, naming the first such', (claim, extra) => {
    expect(outcome({ ...GOOD, ...extra })).toBe(`"${claim}" claim must be a number`);
  });

  test('an nbf that is not a number is "not yet valid", before a bad exp', () => {
    expect(outcome({ ...GOOD, nbf: '1' })).toBe('token not yet valid');
    expect(outcome({ ...GOOD, nbf: [], exp: {} })).toBe('token not yet valid');
    expect(outcome({ ...GOOD, nbf: NOW + 31, exp: 'x' })).toBe('token not yet valid');
    expect(outcome({ ...GOOD, iat: 'x', nbf: 'x' })).toBe('"iat" claim must be a number');
  });

  test.each([
    ['nbf at now + tolerance', { nbf: NOW + 30 }, 'accepted'],
    ['nbf a second beyond', { nbf: NOW + 31 }, 'token not yet valid'],
    ['exp a second within the tolerance', { exp: NOW - 29 }, 'accepted'],
    ['exp at now - tolerance', { exp: NOW - 30 }, 'token expired'],
    ['exp long past', { exp: 0 }, 'token expired'],
    ['exp and nbf both failing: nbf named', { exp: 0, nbf: NOW + 31 }, 'token not yet valid'],
    ['iat exactly now + tolerance (the fraction counts)', { iat: NOW + 30 }, 'accepted'],
    ['iat half a second beyond', { iat: NOW + 30.5 }, 'accepted'],
    ['iat just past that', { iat: NOW + 30.6 }, 'token issued in the future ("iat")'],
    ['no iat: issued long ago', { iat: undefined }, 'accepted'],
    ['an expired token from the future: expired first', { exp: 0, iat: NOW + 99 }, 'token expired'],
  ])('%s: %s', (_what, extra, expected) => {
    expect(outcome({ ...GOOD, ...extra })).toBe(expected);
  });

  test('no tolerance: the bounds move to now', () => {
    expect(outcome({ ...GOOD, exp: NOW + 1 }, { toleranceSeconds: 0 })).toBe('accepted');
    expect(outcome({ ...GOOD, exp: NOW }, { toleranceSeconds: 0 })).toBe('token expired');
    expect(outcome({ ...GOOD, nbf: NOW }, { toleranceSeconds: 0 })).toBe('accepted');
    expect(outcome({ ...GOOD, nbf: NOW + 1 }, { toleranceSeconds: 0 })).toBe('token not yet valid');
  });
});
