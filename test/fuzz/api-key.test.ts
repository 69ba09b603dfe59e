import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { ApiKeyVerifier } from '../../sidecar/auth/api-key-verifier.js';
import {
  formatApiKey,
  hashSecret,
  parseApiKey,
  secretMatches,
} from '../../sidecar/keys/api-key.js';
import { directoryOf, row } from '../unit/support/clients.js';
import { anyText, FUZZ_TIMEOUT_MS, params } from './runs.js';

const B64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
const secretArb = fc.string({
  unit: fc.constantFrom(...B64URL.split('')),
  minLength: 43,
  maxLength: 43,
});
const idArb = fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER });

/** The reference reading of `<id>.<secret>`: canonical decimal id below 2^53, 43 base64url. */
function reference(key: string): { id: number; secret: string } | null {
  const dot = key.indexOf('.');
  if (dot < 0) return null;
  const idText = key.slice(0, dot);
  const secret = key.slice(dot + 1);
  const id = Number(idText);
  if (!Number.isSafeInteger(id) || id < 1 || String(id) !== idText) return null;
  if (secret.length !== 43 || ![...secret].every((c) => B64URL.includes(c))) return null;
  return { id, secret };
}

/** Keys near the valid shape, where the parser's edge cases are. */
const nearKey = fc.oneof(
  anyText(80),
  fc.tuple(idArb, secretArb).map(([id, s]) => formatApiKey(id, s)),
  fc
    .tuple(
      fc.string({ unit: fc.constantFrom(...'0123456789+-.e '.split('')), maxLength: 18 }),
      fc.string({ unit: fc.constantFrom(...`${B64URL}.=+/ \n`.split('')), maxLength: 46 }),
    )
    .map(([id, s]) => `${id}.${s}`),
);

describe('API keys', () => {
  test(
    'format then parse gives back the id and the secret',
    () => {
      fc.assert(
        fc.property(idArb, secretArb, (id, secret) => {
          expect(parseApiKey(formatApiKey(id, secret))).toEqual({ ok: true, id, secret });
        }),
        params(),
      );
    },
    FUZZ_TIMEOUT_MS,
  );

  test(
    'parsing never throws and accepts exactly what the reference accepts',
    () => {
      fc.assert(
        fc.property(nearKey, (key) => {
          const got = parseApiKey(key);
          const want = reference(key);
          expect(got).toEqual(
            want === null ? { ok: false, reason: expect.any(String) } : { ok: true, ...want },
          );
        }),
        params([[`9007199254740993.${'A'.repeat(43)}`], [`1.${'A'.repeat(43)}\n`]]),
      );
    },
    FUZZ_TIMEOUT_MS,
  );

  test(
    'a secret matches a stored hash exactly when it is the same secret',
    () => {
      fc.assert(
        fc.property(anyText(50), anyText(50), (presented, stored) => {
          const hash = createHash('sha256').update(stored, 'utf8').digest();
          expect(secretMatches(presented, hash)).toBe(hashSecret(presented).equals(hash));
          expect(secretMatches(stored, hash)).toBe(true);
        }),
        params(),
      );
    },
    FUZZ_TIMEOUT_MS,
  );

  test(
    'any change to the stored hash, in any byte, refuses the secret',
    () => {
      fc.assert(
        fc.property(secretArb, fc.nat(31), fc.integer({ min: 1, max: 255 }), (secret, at, xor) => {
          const hash = Buffer.from(hashSecret(secret));
          hash[at] = hash[at]! ^ xor;
          expect(secretMatches(secret, hash)).toBe(false);
        }),
        params(),
      );
    },
    FUZZ_TIMEOUT_MS,
  );

  test(
    'the verifier passes only the exact stored key, for any presented text',
    async () => {
      const secret = 'k'.repeat(21) + 'K'.repeat(22);
      const verifier = new ApiKeyVerifier(
        directoryOf([row(7, { secret, isAdmin: true }), row(8, {})]),
      );
      const good = formatApiKey(7, secret);
      await fc.assert(
        fc.asyncProperty(
          fc.oneof(
            nearKey,
            fc.constant(good),
            fc.nat(42).map((i) => `${good.slice(0, 2 + i)}x${good.slice(3 + i)}`),
          ),
          async (key) => {
            const decision = await verifier.verify(key);
            expect(decision.ok).toBe(key === good);
            if (!decision.ok)
              expect(['MALFORMED_CREDENTIALS', 'INVALID_API_KEY']).toContain(decision.code);
          },
        ),
        params(),
      );
    },
    FUZZ_TIMEOUT_MS,
  );
});
