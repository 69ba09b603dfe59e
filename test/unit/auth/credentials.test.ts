import { describe, expect, test } from 'vitest';
import { authorizationValues, parseCredential } from '../../../sidecar/auth/credentials.js';

describe('authorizationValues', () => {
  test('returns every Authorization value in order, whatever the name case', () => {
    expect(
      authorizationValues([
        'Host',
        'a',
        'authorization',
        'apk 1.x',
        'X-Authorization',
        'no',
        'AUTHORIZATION',
        'Bearer t',
        'Authorizatio',
        'no',
        // As long as "authorization": a length test alone would take it.
        'Cache-Control',
        'no',
      ]),
    ).toEqual(['apk 1.x', 'Bearer t']);
  });

  test('is empty without an Authorization header', () => {
    expect(authorizationValues([])).toEqual([]);
    expect(authorizationValues(['Accept', 'authorization'])).toEqual([]);
  });
});

describe('parseCredential', () => {
  test('splits scheme and value', () => {
    expect(parseCredential(['apk 1.abc'])).toEqual({ ok: true, scheme: 'apk', value: '1.abc' });
    expect(parseCredential(['Bearer a.b.c'])).toEqual({
      ok: true,
      scheme: 'bearer',
      value: 'a.b.c',
    });
  });

  test('matches the scheme case-insensitively and allows several spaces before the value', () => {
    expect(parseCredential(['APK   x'])).toEqual({ ok: true, scheme: 'apk', value: 'x' });
    expect(parseCredential(['bEaReR x'])).toEqual({ ok: true, scheme: 'bearer', value: 'x' });
  });

  test('no header: MISSING_CREDENTIALS', () => {
    expect(parseCredential([])).toEqual({
      ok: false,
      code: 'MISSING_CREDENTIALS',
      message: 'The request carries no Authorization header.',
    });
  });

  test('two headers, even identical: MULTIPLE_CREDENTIALS', () => {
    expect(parseCredential(['apk x', 'apk x'])).toEqual({
      ok: false,
      code: 'MULTIPLE_CREDENTIALS',
      message: 'The request carries more than one Authorization header.',
    });
  });

  test.each([
    '',
    'apk',
    'apk ',
    ' apk x',
    'apk x y',
    'apk\tx',
    'apk x ',
    '1apk x',
    'ap(k x',
    'apk\nx',
  ])('refuses %j as MALFORMED_CREDENTIALS', (header) => {
    expect(parseCredential([header])).toEqual({
      ok: false,
      code: 'MALFORMED_CREDENTIALS',
      message:
        'The Authorization header must be "<scheme> <credential>" (for example "apk <id>.<secret>").',
    });
  });

  // A bearer attempt names its scheme, so its refusal carries X-jwt-error like any bad token.
  test.each([
    ['Bearer', 'missing token'],
    ['bearer', 'missing token'],
    ['BEARER', 'missing token'],
    ['Bearer   ', 'missing token'],
    ['bEaReR \t ', 'missing token'],
    ['Bearer a b', 'malformed Authorization header'],
    ['bearer a b', 'malformed Authorization header'],
    ['Bearer\ta', 'malformed Authorization header'],
    ['Bearer a ', 'malformed Authorization header'],
  ])('refuses %j as a malformed bearer attempt (%s)', (header, jwtError) => {
    expect(parseCredential([header])).toEqual({
      ok: false,
      code: 'MALFORMED_CREDENTIALS',
      message: 'The Authorization header must be "Bearer <token>", one token without whitespace.',
      scheme: 'bearer',
      jwtError,
    });
  });

  test.each(['Bearerx', 'Bearer,x', 'xBearer'])(
    'does not take %j for a bearer attempt',
    (header) => {
      expect(parseCredential([header])).not.toHaveProperty('scheme');
    },
  );

  test.each(['Basic x', 'apikey x', 'Bearer! x', 'toString x', 'constructor x', 'Constructor x'])(
    'refuses %j as UNSUPPORTED_SCHEME',
    (header) => {
      expect(parseCredential([header])).toEqual({
        ok: false,
        code: 'UNSUPPORTED_SCHEME',
        message: 'Only the "apk" and "Bearer" schemes are accepted.',
      });
    },
  );

  test('accepts every token character in the scheme before deciding it is unknown', () => {
    expect(parseCredential(["a0!#$%&'*+.^_`|~- x"])).toMatchObject({ code: 'UNSUPPORTED_SCHEME' });
  });
});
