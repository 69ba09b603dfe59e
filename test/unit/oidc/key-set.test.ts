import { describe, expect, test } from 'vitest';
import { KeyNotFoundError, ProviderError } from '../../../sidecar/oidc/errors.js';
import { ProviderKeySet } from '../../../sidecar/oidc/key-set.js';
import type { ProviderHttp } from '../../../sidecar/oidc/provider-http.js';
import { makeKey } from '../support/key-server.js';

const A = makeKey('a');
const B = makeKey('b');
const JWKS = new URL('https://idp.example/jwks');

/** A key set endpoint whose answers the test queues; counts fetches. */
function endpoint(...answers: (unknown | Error)[]) {
  let fetches = 0;
  const http = {
    getJson: async (url: URL, sslVerify: boolean, what: string) => {
      expect([url, sslVerify, what]).toEqual([JWKS, true, 'key set']);
      const answer = answers[Math.min(fetches++, answers.length - 1)];
      if (answer instanceof Error) throw answer;
      return answer;
    },
  } as unknown as ProviderHttp;
  return { http, fetches: () => fetches };
}

function keySet(http: ProviderHttp, cooldownMs = 0) {
  let now = 1_000_000;
  const set = new ProviderKeySet(
    http,
    JWKS,
    true,
    { now: () => now, maxAgeMs: 60_000, maxStaleMs: 60_000, cooldownMs },
    () => {},
  );
  return { set, advance: (ms: number) => (now += ms) };
}

const keys = (...list: { jwk: Record<string, unknown> }[]) => ({ keys: list.map((k) => k.jwk) });

describe('ProviderKeySet', () => {
  test('a held kid resolves from one fetch', async () => {
    const e = endpoint(keys(A, B));
    const { set } = keySet(e.http);
    const [held, ...more] = await set.keysFor({ alg: 'ES256', kid: 'b' });
    expect(more).toEqual([]);
    expect(held?.export({ format: 'jwk' })).toEqual({
      kty: 'EC',
      crv: 'P-256',
      x: B.jwk.x,
      y: B.jwk.y,
    });
    await set.keysFor({ alg: 'ES256', kid: 'a' });
    expect(e.fetches()).toBe(1);
  });

  test('an unknown kid refetches once; a rotated-in key is then found', async () => {
    const e = endpoint(keys(A), keys(A, B));
    const { set } = keySet(e.http);
    await expect(set.keysFor({ alg: 'ES256', kid: 'b' })).resolves.toHaveLength(1);
    expect(e.fetches()).toBe(2);
  });

  test('an unknown kid after the refetch: KeyNotFoundError naming it (cut to 64)', async () => {
    const e = endpoint(keys(A));
    const { set } = keySet(e.http);
    const kid = 'k'.repeat(70);
    await expect(set.keysFor({ alg: 'ES256', kid })).rejects.toThrow(
      new KeyNotFoundError(
        `no key with kid ${JSON.stringify('k'.repeat(64))} at the identity provider`,
      ),
    );
    expect(e.fetches()).toBe(2);
  });

  test('within the cooldown an unknown kid costs no fetch', async () => {
    const e = endpoint(keys(A));
    const { set, advance } = keySet(e.http, 30_000);
    await set.keysFor({ alg: 'ES256', kid: 'a' });
    await expect(set.keysFor({ alg: 'ES256', kid: 'x' })).rejects.toThrow(KeyNotFoundError);
    expect(e.fetches()).toBe(1);
    advance(30_000);
    await expect(set.keysFor({ alg: 'ES256', kid: 'x' })).rejects.toThrow(KeyNotFoundError);
    expect(e.fetches()).toBe(2);
  });

  test('a failing refetch: KeyNotFoundError that says so', async () => {
    const e = endpoint(keys(A), new ProviderError('key set failed: down'));
    const { set } = keySet(e.http);
    await expect(set.keysFor({ alg: 'ES256', kid: 'b' })).rejects.toThrow(
      new KeyNotFoundError(
        'no key with kid "b" at the identity provider (refreshing the key set failed)',
      ),
    );
  });

  test('no kid and no matching key: a message without a kid', async () => {
    const e = endpoint(keys(A));
    const { set } = keySet(e.http);
    await expect(set.keysFor({ alg: 'RS256' })).rejects.toThrow(
      new KeyNotFoundError('no matching key at the identity provider'),
    );
  });

  test("no kid and several candidates: all of them, in the set's order", async () => {
    const noKid = (k: typeof A) => ({ jwk: { ...k.jwk, kid: undefined } });
    const e = endpoint(keys(noKid(A), noKid(B)));
    const { set } = keySet(e.http);
    const found = await set.keysFor({ alg: 'ES256' });
    expect(found.map((k) => k.export({ format: 'jwk' }).x)).toEqual([A.jwk.x, B.jwk.x]);
    expect(e.fetches()).toBe(1);
  });

  test('several candidates of which one cannot be imported: the others', async () => {
    const broken = { kty: 'EC', crv: 'P-256', x: 'AAAA', y: 'AAAA' };
    const e = endpoint({ keys: [broken, { ...A.jwk, kid: undefined }] });
    const { set } = keySet(e.http);
    const found = await set.keysFor({ alg: 'ES256' });
    expect(found.map((k) => k.export({ format: 'jwk' }).x)).toEqual([A.jwk.x]);
  });

  test('several candidates none of which can be imported: a fault, not a missing key', async () => {
    const broken = { kty: 'EC', crv: 'P-256', x: 'AAAA', y: 'AAAA' };
    const e = endpoint({ keys: [broken, { ...broken, x: 'BBBB' }] });
    const { set } = keySet(e.http);
    const failure = set.keysFor({ alg: 'ES256' });
    await expect(failure).rejects.toThrow(
      new Error('none of the matching published keys can be imported'),
    );
    await expect(failure).rejects.not.toBeInstanceOf(KeyNotFoundError);
  });

  test('the same key is the same object each time (made once)', async () => {
    const e = endpoint(keys(A));
    const { set } = keySet(e.http);
    const [first] = await set.keysFor({ alg: 'ES256', kid: 'a' });
    const [again] = await set.keysFor({ alg: 'ES256', kid: 'a' });
    expect(again).toBe(first);
  });

  test('a published key jose cannot import is a fault, not a missing key', async () => {
    const e = endpoint({ keys: [{ kty: 'EC', crv: 'P-256', kid: 'a', x: 'AAAA', y: 'AAAA' }] });
    const { set } = keySet(e.http);
    const failure = set.keysFor({ alg: 'ES256', kid: 'a' });
    // As jose threw it (WebCrypto's import error), for the verifier to log.
    await expect(failure).rejects.toMatchObject({ name: 'DataError', message: 'Invalid keyData' });
  });

  test.each([
    ['symmetric', { kty: 'oct', kid: 'a', k: 'c2VjcmV0' }],
    ['private', { ...A.jwk, d: 'AAAA' }],
    ['with a k member', { ...A.jwk, k: 'c2VjcmV0' }],
  ])('a %s key in the set is never used', async (_what, jwk) => {
    const e = endpoint({ keys: [jwk] });
    const { set } = keySet(e.http);
    await expect(set.keysFor({ alg: 'ES256', kid: 'a' })).rejects.toThrow(KeyNotFoundError);
  });

  test.each([
    ['no keys list', {}, 'key set failed: no "keys" list'],
    ['null', null, 'key set failed: no "keys" list'],
    ['keys not a list', { keys: {} }, 'key set failed: no "keys" list'],
    ['a list as a key', { keys: [[1]] }, 'key set failed: malformed key set'],
  ])('%s: ProviderError', async (_what, body, message) => {
    const e = endpoint(body);
    const { set } = keySet(e.http);
    await expect(set.keysFor({ alg: 'ES256', kid: 'a' })).rejects.toThrow(
      new ProviderError(message),
    );
  });

  test('non-object members are dropped, the rest still used', async () => {
    const e = endpoint({ keys: [null, 'x', 5, A.jwk] });
    const { set } = keySet(e.http);
    await expect(set.keysFor({ alg: 'ES256', kid: 'a' })).resolves.toHaveLength(1);
  });
});
