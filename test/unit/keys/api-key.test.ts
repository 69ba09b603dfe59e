import * as crypto from 'node:crypto';
import { afterEach, describe, expect, test, vi } from 'vitest';
import {
  formatApiKey,
  generateSecret,
  hashSecret,
  parseApiKey,
  secretMatches,
} from '../../../sidecar/keys/api-key.js';

// node:crypto is wrapped (not replaced) so one test can watch which comparison decides; every
// other test gets the real functions.
vi.mock('node:crypto', async (importOriginal) => {
  const real = await importOriginal<typeof import('node:crypto')>();
  return { ...real, timingSafeEqual: vi.fn(real.timingSafeEqual) };
});

afterEach(() => {
  vi.mocked(crypto.timingSafeEqual).mockClear();
});

const SECRET = 'A'.repeat(43);

describe('generateSecret', () => {
  test('makes 43 base64url characters (32 random bytes) and their SHA-256', () => {
    const { secret, hash } = generateSecret();
    expect(secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(Buffer.from(secret, 'base64url')).toHaveLength(32);
    expect(hash.equals(crypto.createHash('sha256').update(secret).digest())).toBe(true);
  });

  test('never makes the same secret twice', () => {
    const secrets = new Set(Array.from({ length: 64 }, () => generateSecret().secret));
    expect(secrets.size).toBe(64);
  });

  test('a generated key parses back to its id and secret', () => {
    const { secret } = generateSecret();
    expect(parseApiKey(formatApiKey(42, secret))).toEqual({ ok: true, id: 42, secret });
  });
});

describe('hashSecret', () => {
  test('is the SHA-256 of the UTF-8 text', () => {
    expect(hashSecret('abc').toString('hex')).toBe(
      'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad',
    );
    expect(hashSecret('é').equals(crypto.createHash('sha256').update('é', 'utf8').digest())).toBe(
      true,
    );
  });
});

describe('formatApiKey', () => {
  test('is <id>.<secret>', () => {
    expect(formatApiKey(7, SECRET)).toBe(`7.${SECRET}`);
  });
});

describe('parseApiKey', () => {
  test('accepts <id>.<43 base64url characters>', () => {
    expect(parseApiKey(`1.${SECRET}`)).toEqual({ ok: true, id: 1, secret: SECRET });
    const mixed = `${'aZ09_-'.repeat(7)}x`;
    expect(parseApiKey(`9007199254740991.${mixed}`)).toEqual({
      ok: true,
      id: 9007199254740991,
      secret: mixed,
    });
  });

  test.each([
    ['no period', SECRET],
    ['empty id', `.${SECRET}`],
    ['leading zero', `01.${SECRET}`],
    ['zero', `0.${SECRET}`],
    ['negative', `-1.${SECRET}`],
    ['sign', `+1.${SECRET}`],
    ['17 digits', `12345678901234567.${SECRET}`],
    ['letters in the id', `1a.${SECRET}`],
    ['empty secret', '1.'],
    ['a second period', `1.${SECRET}.x`],
    ['padding', `1.${'A'.repeat(42)}=`],
    ['standard base64 characters', `1.${'A'.repeat(42)}+`],
    ['text before', ` 1.${SECRET}`],
    ['text after', `1.${SECRET}\n`],
    ['a line break before', `x\n1.${SECRET}`],
  ])('refuses %s as malformed', (_what, key) => {
    expect(parseApiKey(key)).toEqual({
      ok: false,
      reason: 'An API key has the form <id>.<secret>.',
    });
  });

  test('refuses a 16-digit id beyond 2^53 as out of range', () => {
    expect(parseApiKey(`9007199254740993.${SECRET}`)).toEqual({
      ok: false,
      reason: 'The API key id is out of range.',
    });
  });

  test.each([42, 44, 1])('refuses a secret of %i characters', (length) => {
    expect(parseApiKey(`1.${'A'.repeat(length)}`)).toEqual({
      ok: false,
      reason: 'The API key secret has the wrong length.',
    });
  });
});

describe('secretMatches', () => {
  // Computed by node:crypto itself: the expected stored form, independent of the module.
  const stored = crypto.createHash('sha256').update(SECRET, 'utf8').digest();

  test('accepts the secret whose hash is stored', () => {
    expect(secretMatches(SECRET, stored)).toBe(true);
  });

  test('refuses another secret', () => {
    expect(secretMatches('B'.repeat(43), stored)).toBe(false);
  });

  // A comparison of only the first bytes of the digest would accept these.
  test.each([0, 3, 4, 16, 31])('refuses a stored hash that differs only in byte %i', (index) => {
    const other = Buffer.from(stored);
    other[index] = other[index]! ^ 0x01;
    expect(secretMatches(SECRET, other)).toBe(false);
  });

  test('refuses, without throwing, a stored hash of another length', () => {
    expect(secretMatches(SECRET, stored.subarray(0, 16))).toBe(false);
    expect(secretMatches(SECRET, Buffer.concat([stored, Buffer.alloc(1)]))).toBe(false);
    expect(secretMatches(SECRET, Buffer.alloc(0))).toBe(false);
  });

  // Constant time cannot be measured reliably in a unit test, so the test pins the mechanism:
  // the answer is whatever crypto.timingSafeEqual says about the two full digests. A comparison
  // by Buffer.equals, ===, or a loop that stops early would not consult it.
  test('decides by crypto.timingSafeEqual over the two full SHA-256 digests', () => {
    const spy = vi.mocked(crypto.timingSafeEqual);
    expect(secretMatches(SECRET, stored)).toBe(true);
    expect(spy).toHaveBeenCalledTimes(1);
    const [presented, expected] = spy.mock.calls[0]!;
    expect(Buffer.from(presented as Uint8Array).equals(stored)).toBe(true);
    expect(expected).toBe(stored);

    spy.mockReturnValueOnce(false);
    expect(secretMatches(SECRET, stored)).toBe(false);
    spy.mockReturnValueOnce(true);
    expect(secretMatches('B'.repeat(43), stored)).toBe(true);
  });
});
