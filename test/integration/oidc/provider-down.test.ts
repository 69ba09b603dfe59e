import { afterAll, beforeAll, expect, test } from 'vitest';
import { OIDC_DEFAULTS } from '../../../sidecar/oidc/settings.js';
import { freshDatabase } from '../../support/database.js';
import { type OidcSetup, startOidcSetup } from '../../support/oidc-setup.js';
import { type OidcTestSidecar, startOidcSidecar } from '../../support/oidc-sidecar.js';
import {
  hs256WithPublicKey,
  signedByStranger,
  unsignedToken,
  withFlippedSignatureBit,
  withPayload,
} from '../../support/oidc-tokens.js';

// In order: the sidecar learns the provider's keys, then the provider stops for good.
let setup: OidcSetup;
let databaseUrl: string;
let seen: string;
let unseen: string;
let coldSidecar: OidcTestSidecar | null = null;

beforeAll(async () => {
  databaseUrl = await freshDatabase();
  setup = await startOidcSetup(databaseUrl, ['svc-a', 'svc-b', 'svc-admin']);
  await setup.addClient('svc-a');
  await setup.addClient('svc-b');
  await setup.addClient('svc-admin', { isAdmin: true });
  seen = await setup.provider.issueToken('svc-a');
  unseen = await setup.provider.issueToken('svc-b');
  expect((await setup.auth(seen)).status).toBe(204);
  await setup.provider.stop();
});
afterAll(async () => {
  await coldSidecar?.close();
  await setup?.close();
});

const unreachable = 'OpenID Connect discovery failed: identity provider unreachable';
const nowSeconds = () => Math.floor(setup.sidecar.clock.now() / 1000);

test('tokens signed with cached keys still verify: one seen before, one never seen', async () => {
  for (const token of [seen, unseen]) {
    const res = await setup.auth(token);
    expect(res.status, res.text).toBe(204);
  }
});

test('nothing unverified passes while the provider is down', async () => {
  const forged: [string, string][] = [
    [withPayload(seen, { sub: 'svc-admin' }), 'signature verification failed'],
    [withFlippedSignatureBit(unseen), 'signature verification failed'],
    [unsignedToken(setup.provider, { sub: 'svc-admin' }), 'unsupported algorithm none'],
    [
      await hs256WithPublicKey(setup.provider, { sub: 'svc-admin' }),
      'symmetric algorithm "HS256" is not accepted',
    ],
    [
      await setup.provider.sign({ sub: 'svc-a', iss: 'https://evil.example' }),
      'unexpected "iss" claim value',
    ],
    [await setup.provider.sign({ sub: 'svc-a', exp: nowSeconds() - 300 }), 'token expired'],
  ];
  for (const [token, jwtError] of forged) {
    const res = await setup.auth(token);
    expect(res.status).toBe(401);
    expect(res.headers['x-jwt-error']).toBe(jwtError);
  }
  // An unknown kid would need the provider: refused, whether or not a refetch is allowed.
  const stranger = await signedByStranger(setup.provider, { sub: 'svc-a' }, 'new-kid');
  expect((await setup.auth(stranger)).headers['x-jwt-error']).toBe(
    'no key with kid "new-kid" at the identity provider',
  );
  setup.sidecar.clock.advance(OIDC_DEFAULTS.jwksCooldownMs + 1_000);
  expect((await setup.auth(stranger)).headers['x-jwt-error']).toBe(
    'no key with kid "new-kid" at the identity provider (refreshing the key set failed)',
  );
});

test('a sidecar that never reached the provider refuses every token (fails closed)', async () => {
  coldSidecar = await startOidcSidecar(databaseUrl, { OIDC_CA_FILE: setup.caFile });
  for (const token of [seen, unseen]) {
    const res = await setup.auth(token, {}, coldSidecar);
    expect(res.status).toBe(401);
    expect(res.headers['x-jwt-error']).toBe(unreachable);
    expect(res.headers['www-authenticate']).toBe('Bearer error="invalid_token"');
  }
});

test('cached keys outlive their refresh age while the provider is down, up to a bound', async () => {
  // Hand-signed with the provider's key and a long life, as the clock moves far ahead.
  const longLived = await setup.provider.sign({ sub: 'svc-b', exp: nowSeconds() + 3 * 86_400 });
  setup.sidecar.clock.advance(OIDC_DEFAULTS.cacheMaxAgeMs + 1_000);
  // Stale: the background refresh fails, the cached keys keep answering.
  for (let i = 0; i < 3; i += 1) expect((await setup.auth(longLived)).status).toBe(204);
  setup.sidecar.clock.advance(OIDC_DEFAULTS.maxStaleMs);
  const res = await setup.auth(longLived);
  expect(res.status).toBe(401);
  expect(res.headers['x-jwt-error']).toBe(unreachable);
});
