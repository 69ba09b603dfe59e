import { randomBytes } from 'node:crypto';
import { describe, expect, test } from 'vitest';
import { parseProofFile } from '../../../common/sidecar-proof.js';
import { sameProof } from '../../../sidecar/proof/same-proof.js';

const secret = randomBytes(32);
const hex = secret.toString('hex');

describe('sameProof: nginx’s proof against the secret, in constant time', () => {
  test('the secret itself is the same', () => {
    expect(sameProof(hex, secret)).toBe('same');
  });

  test('another secret of the same shape is wrong, whichever digit differs', () => {
    for (const at of [0, 1, 31, 62, 63]) {
      const flipped = hex.slice(0, at) + (hex[at] === '0' ? '1' : '0') + hex.slice(at + 1);
      expect(sameProof(flipped, secret)).toBe('wrong');
    }
  });

  test.each([
    ['empty', ''],
    ['a prefix', hex.slice(0, 63)],
    ['one digit more', `${hex}0`],
    ['upper case', hex.toUpperCase()],
    ['with its line feed', `${hex}\n`],
    ['base64url of the bytes', secret.toString('base64url')],
    ['sent twice (Node joins them)', `${hex}, ${hex}`],
    ['not hex', 'z'.repeat(64)],
  ])('%s is malformed, never compared', (_, presented) => {
    expect(sameProof(presented, secret)).toBe('malformed');
  });

  test('a secret that is not 32 bytes proves nobody', () => {
    expect(sameProof(hex, secret.subarray(0, 16))).toBe('malformed');
  });
});

describe('parseProofFile: the shape generator, sidecar and Lua share', () => {
  test('64 lowercase hex digits, with or without one line feed', () => {
    for (const text of [hex, `${hex}\n`]) {
      const parsed = parseProofFile(text);
      expect(parsed.ok && parsed.secret.equals(secret)).toBe(true);
    }
  });

  test.each(['', `${hex}\n\n`, `${hex}\r\n`, ` ${hex}`, hex.toUpperCase(), hex.slice(2)])(
    'anything else is refused: %j',
    (text) => {
      expect(parseProofFile(text)).toEqual({ ok: false, reason: expect.stringContaining('64') });
    },
  );
});
