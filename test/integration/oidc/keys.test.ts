import { afterAll, beforeAll, expect, test } from 'vitest';
import { OIDC_DEFAULTS } from '../../../sidecar/oidc/settings.js';
import { freshDatabase } from '../../support/database.js';
import { type OidcSetup, startOidcSetup } from '../../support/oidc-setup.js';
import { signedByStranger } from '../../support/oidc-tokens.js';

// One provider and one sidecar for the whole file, in order: the tests read the provider's
// request counters, which only make sense as a sequence.
let setup: OidcSetup;
const clients = ['svc-1', 'svc-2', 'svc-3', 'svc-4', 'svc-5'];

beforeAll(async () => {
  setup = await startOidcSetup(await freshDatabase(), clients);
  for (const id of clients) await setup.addClient(id);
});
afterAll(() => setup?.close());

const cooldownMs = OIDC_DEFAULTS.jwksCooldownMs;

test('discovery and keys are fetched once, not per request', async () => {
  const tokens = await Promise.all(clients.map((id) => setup.provider.issueToken(id)));
  expect(setup.provider.hits).toEqual({ discovery: 0, jwks: 0 });
  // The first requests arrive together: they share one discovery and one key set fetch.
  const first = await Promise.all(tokens.map((t) => setup.auth(t)));
  expect(first.map((r) => r.status)).toEqual(tokens.map(() => 204));
  expect(setup.provider.hits).toEqual({ discovery: 1, jwks: 1 });
  for (let round = 0; round < 20; round += 1) {
    const res = await Promise.all(tokens.map((t) => setup.auth(t)));
    expect(res.map((r) => r.status)).toEqual(tokens.map(() => 204));
  }
  expect(setup.provider.hits).toEqual({ discovery: 1, jwks: 1 });
});

test('a stream of bogus kids is refused without hammering the provider', async () => {
  const bogus = (i: number) => signedByStranger(setup.provider, { sub: 'svc-1' }, `bogus-${i}`);
  const before = setup.provider.hits.jwks;
  // Within the cooldown after the last fetch: no fetch at all.
  for (let i = 0; i < 50; i += 1) {
    const res = await setup.auth(await bogus(i));
    expect(res.status).toBe(401);
    expect(res.headers['x-jwt-error']).toBe(
      `no key with kid "bogus-${i}" at the identity provider`,
    );
  }
  expect(setup.provider.hits.jwks).toBe(before);
  // Once the cooldown has passed, an unknown kid may cause one refetch, and only one, however
  // many such tokens arrive (at once or one after another).
  setup.sidecar.clock.advance(cooldownMs + 1_000);
  const burst = await Promise.all(
    Array.from({ length: 20 }, async (_, i) => setup.auth(await bogus(100 + i))),
  );
  expect(burst.map((r) => r.status)).toEqual(burst.map(() => 401));
  for (let i = 0; i < 30; i += 1) expect((await setup.auth(await bogus(200 + i))).status).toBe(401);
  expect(setup.provider.hits.jwks).toBe(before + 1);
});

test('the provider rotates its key: new-key tokens pass without a restart', async () => {
  const oldToken = await setup.provider.issueToken('svc-1');
  const oldKid = setup.provider.signingKey.kid;
  const newKey = setup.provider.rotate();
  const newToken = await setup.provider.issueToken('svc-2');
  expect(JSON.parse(Buffer.from(newToken.split('.')[0]!, 'base64url').toString()).kid).toBe(
    newKey.kid,
  );
  const before = setup.provider.hits.jwks;
  // The last fetch was moments ago (previous test), so the cooldown still applies.
  const early = await setup.auth(newToken);
  expect(early.headers['x-jwt-error']).toBe(
    `no key with kid "${newKey.kid}" at the identity provider`,
  );
  expect(setup.provider.hits.jwks).toBe(before);
  setup.sidecar.clock.advance(cooldownMs + 1_000);
  const res = await setup.auth(newToken);
  expect(res.status, res.text).toBe(204);
  expect(res.headers['x-client-id']).toBe('svc-2');
  expect(setup.provider.hits.jwks).toBe(before + 1);
  // The old key is still published, so its tokens still pass, from the same fetch.
  expect((await setup.auth(oldToken)).status).toBe(204);
  expect(setup.provider.hits.jwks).toBe(before + 1);
  expect(oldKid).not.toBe(newKey.kid);
});

test('a key the provider stops publishing stops verifying once the cache refreshes', async () => {
  const oldKey = setup.provider.keys[1]!;
  const oldKeyToken = await setup.provider.sign({ sub: 'svc-3' }, { key: oldKey });
  expect((await setup.auth(oldKeyToken)).status).toBe(204);
  setup.provider.retireOldestKey();
  // Past the cache's maximum age the keys are refreshed in the background (the request that
  // notices still gets the cached answer), so the refusal follows within a moment.
  setup.sidecar.clock.advance(OIDC_DEFAULTS.cacheMaxAgeMs + 1_000);
  await expect
    .poll(async () => (await setup.auth(oldKeyToken)).headers['x-jwt-error'], { interval: 10 })
    .toBe(`no key with kid "${oldKey.kid}" at the identity provider`);
  // Hand-signed with a long life: the sidecar's clock is now well ahead of real time.
  const exp = Math.floor(setup.sidecar.clock.now() / 1000) + 600;
  const current = await setup.provider.sign({ sub: 'svc-3', exp });
  const res = await setup.auth(current);
  expect(res.status, res.text).toBe(204);
});
