import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { authorizationValues, parseCredential } from '../../sidecar/auth/credentials.js';
import { anyText, FUZZ_TIMEOUT_MS, params } from './runs.js';

// The Authorization header: every string a caller can send (and some Node would not let
// through), checked against a plain reference reading of RFC 9110 §11.6.2 with our two schemes.

const TOKEN_CHAR = /^[A-Za-z0-9!#$%&'*+.^_`|~-]$/;

/** The reference: scheme token, one or more spaces, one run of non-whitespace; apk or bearer. */
function reference(values: string[]): { scheme: string; value: string } | null {
  if (values.length !== 1) return null;
  const header = values[0]!;
  const space = header.indexOf(' ');
  if (space <= 0) return null;
  const scheme = header.slice(0, space);
  if (!/^[A-Za-z]/.test(scheme) || ![...scheme].every((c) => TOKEN_CHAR.test(c))) return null;
  const value = header.slice(space).replace(/^ +/, '');
  if (value === '' || /\s/.test(value)) return null;
  const lower = scheme.toLowerCase();
  if (lower !== 'apk' && lower !== 'bearer') return null;
  return { scheme: lower, value };
}

const schemeWord = fc.oneof(
  fc.constantFrom('apk', 'APK', 'Apk', 'bearer', 'Bearer', 'BEARER', 'basic', 'constructor'),
  fc.constantFrom('toString', 'hasOwnProperty', '__proto__', 'valueOf', 'Constructor'),
  fc.string({ unit: fc.constantFrom(...'aAbBkKpPe!#_.-0'.split('')), minLength: 1, maxLength: 8 }),
);
const headerValue = fc.oneof(
  anyText(),
  fc
    .tuple(schemeWord, fc.constantFrom(' ', '  ', '\t', ''), anyText(48))
    .map(([s, sep, v]) => `${s}${sep}${v}`),
);

/** Counterexamples found by these properties, kept as regression cases. */
const REGRESSIONS: [string[]][] = [
  // Found by the reference property (seed 787286496, path 588:3:2:2): the scheme table was an
  // object literal, so Object's prototype answered SCHEMES['constructor'] and the header
  // passed as a credential of an unnamed scheme (then verified as a bearer token).
  [['Constructor ]']],
  [['constructor x']],
];

describe('parseCredential', () => {
  test(
    'never throws, and accepts exactly what the reference accepts',
    () => {
      fc.assert(
        fc.property(fc.array(headerValue, { maxLength: 3 }), (values) => {
          const got = parseCredential(values);
          const want = reference(values);
          if (want === null) {
            expect(got.ok).toBe(false);
            if (!got.ok) expect(typeof got.message).toBe('string');
            // A refused bearer attempt says why in X-jwt-error, however it is malformed.
            if (values.length === 1 && /^bearer(\s|$)/i.test(values[0]!)) {
              expect(got).toMatchObject({ scheme: 'bearer', jwtError: expect.any(String) });
            }
          } else {
            expect(got).toEqual({ ok: true, ...want });
          }
        }),
        params(REGRESSIONS),
      );
    },
    FUZZ_TIMEOUT_MS,
  );

  test(
    'round-trips scheme and credential in any case and spacing',
    () => {
      fc.assert(
        fc.property(
          fc.constantFrom('apk', 'bearer'),
          fc.array(fc.boolean(), { minLength: 6, maxLength: 6 }),
          fc.integer({ min: 1, max: 4 }),
          fc.string({ unit: fc.constantFrom(...'aZ09._-~+/='.split('')), minLength: 1 }),
          (scheme, upper, spaces, value) => {
            const cased = [...scheme].map((c, i) => (upper[i] ? c.toUpperCase() : c)).join('');
            expect(parseCredential([`${cased}${' '.repeat(spaces)}${value}`])).toEqual({
              ok: true,
              scheme,
              value,
            });
          },
        ),
        params(),
      );
    },
    FUZZ_TIMEOUT_MS,
  );
});

describe('authorizationValues', () => {
  test(
    'returns exactly the values of headers named authorization, in order',
    () => {
      const name = fc.oneof(
        fc.constantFrom('Authorization', 'authorization', 'AUTHORIZATION', 'Cache-Control'),
        fc.string({ unit: fc.constantFrom(...'aAuthorizATION-x'.split('')), maxLength: 14 }),
      );
      fc.assert(
        fc.property(fc.array(fc.tuple(name, anyText(16)), { maxLength: 6 }), (pairs) => {
          const got = authorizationValues(pairs.flat());
          const want = pairs.filter(([n]) => n.toLowerCase() === 'authorization').map(([, v]) => v);
          expect(got).toEqual(want);
        }),
        params(),
      );
    },
    FUZZ_TIMEOUT_MS,
  );
});
