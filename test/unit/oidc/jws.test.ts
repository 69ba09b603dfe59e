import { constants, createSign, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { CompactSign } from 'jose';
import { describe, expect, test } from 'vitest';
import { base64url, readHeader, SCHEMES, verifyJws } from '../../../sidecar/oidc/jws.js';

// jws.ts checks what jose's jwtVerify checked of the signature, synchronously. Tokens here are
// signed by jose (as a provider's library would), so every scheme is checked against jose's
// own idea of that algorithm; test/fuzz/jwt-parity.test.ts compares the two on random tokens.

const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
const PAYLOAD = { sub: 'robot@idp', exp: 1 };

type Pair = { privateKey: KeyObject; publicKey: KeyObject };
const rsa2048 = generateKeyPairSync('rsa', { modulusLength: 2048 });
const PAIRS: Record<string, () => Pair> = {
  RS256: () => rsa2048,
  RS384: () => rsa2048,
  RS512: () => rsa2048,
  PS256: () => rsa2048,
  PS384: () => rsa2048,
  PS512: () => rsa2048,
  ES256: () => generateKeyPairSync('ec', { namedCurve: 'P-256' }),
  ES384: () => generateKeyPairSync('ec', { namedCurve: 'P-384' }),
  ES512: () => generateKeyPairSync('ec', { namedCurve: 'P-521' }),
  EdDSA: () => generateKeyPairSync('ed25519'),
  Ed25519: () => generateKeyPairSync('ed25519'),
};

async function sign(
  alg: string,
  privateKey: KeyObject,
  header: Record<string, unknown> = {},
): Promise<string> {
  return await new CompactSign(new TextEncoder().encode(JSON.stringify(PAYLOAD)))
    .setProtectedHeader({ alg, ...header })
    .sign(privateKey);
}

/** The token's header as verifyJws is given it (the verifier reads it first). */
const headerOf = (token: string) => readHeader(token) as Record<string, unknown>;

describe('verifyJws', () => {
  test('the schemes are the asymmetric algorithms jose signs with, no more', () => {
    expect(Object.keys(SCHEMES).sort()).toEqual(Object.keys(PAIRS).sort());
  });

  test.each(Object.keys(PAIRS))(
    '%s: verifies what jose signed; any other key or byte fails',
    async (alg) => {
      const pair = PAIRS[alg]!();
      const other = PAIRS[alg]!();
      const token = await sign(alg, pair.privateKey);
      const verified = verifyJws(token, headerOf(token), alg, [pair.publicKey]);
      expect(verified).toEqual({ ok: true, payload: Buffer.from(JSON.stringify(PAYLOAD)) });
      if (other.publicKey !== pair.publicKey) {
        expect(verifyJws(token, headerOf(token), alg, [other.publicKey])).toEqual({
          ok: false,
          reason: 'signature verification failed',
        });
      }
      // One payload byte changed (a valid base64url character for another).
      const dot = token.indexOf('.');
      const changed = `${token.slice(0, dot + 1)}${token[dot + 1] === 'e' ? 'f' : 'e'}${token.slice(dot + 2)}`;
      expect(verifyJws(changed, headerOf(changed), alg, [pair.publicKey]).ok).toBe(false);
    },
  );

  test('a signature under one RSA scheme does not verify under another', async () => {
    const token = await sign('RS256', rsa2048.privateKey);
    for (const alg of ['RS384', 'RS512', 'PS256', 'PS384', 'PS512']) {
      expect(verifyJws(token, headerOf(token), alg, [rsa2048.publicKey]).ok).toBe(false);
    }
    const pss = await sign('PS384', rsa2048.privateKey);
    expect(verifyJws(pss, headerOf(pss), 'PS256', [rsa2048.publicKey]).ok).toBe(false);
    expect(verifyJws(pss, headerOf(pss), 'PS384', [rsa2048.publicKey]).ok).toBe(true);
  });

  test('RSA-PSS: only the digest-length salt verifies (node alone would take any)', () => {
    for (const [alg, bits] of [
      ['PS256', 256],
      ['PS384', 384],
      ['PS512', 512],
    ] as const) {
      const input = `${b64({ alg })}.${b64(PAYLOAD)}`;
      const signed = (saltLength: number) =>
        `${input}.${createSign(`sha${bits}`)
          .update(input)
          .sign({ key: rsa2048.privateKey, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength })
          .toString('base64url')}`;
      const check = (token: string) => verifyJws(token, headerOf(token), alg, [rsa2048.publicKey]);
      expect(check(signed(bits / 8)).ok).toBe(true);
      expect(check(signed(0)).ok).toBe(false);
      expect(check(signed(bits / 8 + 1)).ok).toBe(false);
    }
  });

  test('an ECDSA signature in DER form (not r‖s) fails', async () => {
    const { privateKey, publicKey } = PAIRS.ES256!();
    const token = await sign('ES256', privateKey);
    const [head, body, sig] = token.split('.') as [string, string, string];
    const raw = Buffer.from(sig, 'base64url');
    const int = (b: Buffer) => (b[0]! & 0x80 ? Buffer.concat([Buffer.from([0]), b]) : b);
    const r = int(raw.subarray(0, 32));
    const s = int(raw.subarray(32));
    const der = Buffer.concat([
      Buffer.from([0x30, r.length + s.length + 4, 0x02, r.length]),
      r,
      Buffer.from([0x02, s.length]),
      s,
    ]);
    const token2 = `${head}.${body}.${der.toString('base64url')}`;
    expect(verifyJws(token2, headerOf(token2), 'ES256', [publicKey])).toEqual({
      ok: false,
      reason: 'signature verification failed',
    });
  });

  test('several candidate keys: any one verifying is enough, in any position', async () => {
    const a = PAIRS.ES256!();
    const b = PAIRS.ES256!();
    const token = await sign('ES256', b.privateKey);
    expect(verifyJws(token, headerOf(token), 'ES256', [a.publicKey, b.publicKey]).ok).toBe(true);
    expect(verifyJws(token, headerOf(token), 'ES256', [b.publicKey, a.publicKey]).ok).toBe(true);
    expect(verifyJws(token, headerOf(token), 'ES256', [a.publicKey]).ok).toBe(false);
    expect(verifyJws(token, headerOf(token), 'ES256', []).ok).toBe(false);
  });

  test('an RSA key under 2048 bits is a fault, thrown, whatever the signature', async () => {
    const small = generateKeyPairSync('rsa', { modulusLength: 1024 });
    const token = `${b64({ alg: 'RS256' })}.${b64(PAYLOAD)}.${'A'.repeat(171)}`;
    for (const alg of ['RS256', 'PS512']) {
      expect(() => verifyJws(token, headerOf(token), alg, [small.publicKey])).toThrow(
        new TypeError(`${alg} requires key modulusLength to be 2048 bits or larger`),
      );
    }
    // 2048 itself is enough.
    const ok = await sign('RS256', rsa2048.privateKey);
    expect(verifyJws(ok, headerOf(ok), 'RS256', [rsa2048.publicKey]).ok).toBe(true);
  });

  test('a signature of the wrong length for the key fails without throwing', () => {
    const { publicKey } = PAIRS.ES256!();
    const token = `${b64({ alg: 'ES256' })}.${b64(PAYLOAD)}.AAAA`;
    expect(verifyJws(token, headerOf(token), 'ES256', [publicKey])).toEqual({
      ok: false,
      reason: 'signature verification failed',
    });
  });

  describe('what is refused before or after the signature, with its text', () => {
    const { privateKey, publicKey } = PAIRS.ES256!();
    const check = (token: string) => verifyJws(token, headerOf(token), 'ES256', [publicKey]);

    test('a signature that is not base64url', async () => {
      const token = await sign('ES256', privateKey);
      const signed = token.slice(0, token.lastIndexOf('.'));
      const sig = token.slice(token.lastIndexOf('.') + 1);
      for (const bad of [`${sig}==`, `+${sig.slice(1)}`, `${sig.slice(0, -1)}/`, 'AAAAA', '!']) {
        expect(check(`${signed}.${bad}`)).toEqual({
          ok: false,
          reason: 'malformed token (Failed to base64url decode the signature)',
        });
      }
    });

    test('a payload beyond ASCII, before any key is used', () => {
      const token = `${b64({ alg: 'ES256' })}.é30.AAAA`;
      expect(check(token)).toEqual({
        ok: false,
        reason: 'malformed token (The payload is not a valid base64url string)',
      });
    });

    test('a signed payload that is not base64url: refused after the signature', async () => {
      const header = b64({ alg: 'ES256' });
      const token = await sign('ES256', privateKey);
      // A payload part jose would sign as the raw ASCII bytes it is.
      const input = `${header}.not+base64`;
      const sig = createSign('sha256')
        .update(input)
        .sign({ key: privateKey, dsaEncoding: 'ieee-p1363' })
        .toString('base64url');
      expect(check(`${input}.${sig}`)).toEqual({
        ok: false,
        reason: 'malformed token (Failed to base64url decode the payload)',
      });
      // Unsigned, the same payload is a signature failure first.
      expect(check(`${input}.${token.split('.')[2]}`)).toEqual({
        ok: false,
        reason: 'signature verification failed',
      });
    });

    test('b64 false (an unencoded payload) is refused once the signature is good', async () => {
      const header = b64({ alg: 'ES256', b64: false, crit: ['b64'] });
      const input = `${header}.eyJ4IjoxfQ`;
      const sig = createSign('sha256')
        .update(input)
        .sign({ key: privateKey, dsaEncoding: 'ieee-p1363' })
        .toString('base64url');
      expect(check(`${input}.${sig}`)).toEqual({
        ok: false,
        reason: 'malformed token (JWTs MUST NOT use unencoded payload)',
      });
      expect(check(`${input}.${sig.slice(0, -4)}AAAA`)).toEqual({
        ok: false,
        reason: 'signature verification failed',
      });
    });

    test('b64 true, marked critical: an ordinary token', async () => {
      const token = await sign('ES256', privateKey, { b64: true, crit: ['b64'] });
      expect(check(token).ok).toBe(true);
    });

    test('b64 without crit is not an extension in use (ignored, as RFC 7797 says)', async () => {
      const token = await sign('ES256', privateKey, { b64: 'no' });
      expect(check(token).ok).toBe(true);
    });

    test.each([
      [
        'crit not a list',
        { crit: 'b64', b64: true },
        'malformed token ("crit" (Critical) Header Parameter MUST be an array of non-empty strings when present)',
      ],
      [
        'crit empty',
        { crit: [] },
        'malformed token ("crit" (Critical) Header Parameter MUST be an array of non-empty strings when present)',
      ],
      [
        'crit with an empty name',
        { crit: ['b64', ''], b64: true },
        'malformed token ("crit" (Critical) Header Parameter MUST be an array of non-empty strings when present)',
      ],
      [
        'crit with a number',
        { crit: [1] },
        'malformed token ("crit" (Critical) Header Parameter MUST be an array of non-empty strings when present)',
      ],
      [
        'an unknown critical extension',
        { crit: ['exp'], exp: 1 },
        'unsupported token (Extension Header Parameter "exp" is not recognized)',
      ],
      [
        'b64 then an unknown one',
        { crit: ['b64', 'zip'], b64: true, zip: 1 },
        'unsupported token (Extension Header Parameter "zip" is not recognized)',
      ],
      [
        'critical b64 missing',
        { crit: ['b64'] },
        'malformed token (Extension Header Parameter "b64" is missing)',
      ],
      [
        'critical b64 not a boolean',
        { crit: ['b64'], b64: 'false' },
        'malformed token (The "b64" (base64url-encode payload) Header Parameter must be a boolean)',
      ],
    ])('%s: refused before the signature', (_what, extra, reason) => {
      const token = `${b64({ alg: 'ES256', ...extra })}.${b64(PAYLOAD)}.AAAA`;
      expect(check(token)).toEqual({ ok: false, reason });
    });
  });
});

describe('readHeader and base64url', () => {
  test.each([
    ['a JSON object', `${b64({ alg: 'ES256' })}.x.y`, { alg: 'ES256' }],
    ['an empty object', 'e30.x.y', {}],
    ['an array', `${b64([1])}.x.y`, null],
    ['null', `${b64(null)}.x.y`, null],
    ['a string', `${b64('alg')}.x.y`, null],
    ['not JSON', `${Buffer.from('{alg').toString('base64url')}.x.y`, null],
    ['not UTF-8', `${Buffer.from([0x7b, 0xff, 0x7d]).toString('base64url')}.x.y`, null],
    [
      'not UTF-8 inside a JSON string',
      `${Buffer.concat([Buffer.from('{"alg":"'), Buffer.from([0xff]), Buffer.from('"}')]).toString('base64url')}.x.y`,
      null,
    ],
    ['padded', 'e30=.x.y', null],
    ['standard base64', `${Buffer.from('{"a":"??>"}').toString('base64')}.x.y`, null],
    ['with a space', 'e3 0.x.y', null],
    ['empty', '.x.y', null],
  ])('%s', (_what, token, header) => {
    const read = readHeader(token);
    if (header === null) expect(read).toBeNull();
    else expect(read).toEqual(header);
  });

  test.each([
    ['', ''],
    ['YQ', 'a'],
    ['YWI', 'ab'],
    ['YWJj', 'abc'],
    ['-_8', '\xfb\xff'],
  ])('%j decodes', (part, bytes) => {
    expect(base64url(part)).toEqual(Buffer.from(bytes, 'latin1'));
  });

  test.each(['Y', 'YWJjZ', 'YQ==', 'Y+8', 'Y/8', 'Y Q', 'YQ\n'])('%j is refused', (part) => {
    expect(base64url(part)).toBeNull();
  });
});
