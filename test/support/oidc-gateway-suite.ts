import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { EngineClient } from '../../engine/client/index.js';
import { setDefaultConf } from './default-conf.js';
import type { HttpOptions } from './http.js';
import { CLIENTS } from './management.js';
import { startProviderForGateway } from './oidc-gateway-env.js';
import type { TestOidcProvider } from './oidc-provider.js';
import {
  hs256WithPublicKey,
  signedByStranger,
  unsignedToken,
  withFlippedSignatureBit,
  withPayload,
} from './oidc-tokens.js';
import { expectRevokedWithinBound } from './revocation.js';
import { apk } from './sidecar.js';
import type { Stack } from './stack.js';
import { callStack } from './stack-http.js';

/** What the suite hands to `start`: the environment of a gateway that knows the provider. */
export interface OidcStackEnv {
  /** GATEWAY_SETTINGS (both methods on, the provider's discovery URL), OIDC_CA_FILE... */
  env: Record<string, string>;
}

/**
 * Issue 4's acceptance through the real nginx: a real OpenID Connect provider (HTTPS, test CA)
 * and a gateway whose settings name it, with API keys on too so the bootstrap admin key can
 * create the token clients (spec 5.3.5). Only what a caller sees is checked: status,
 * `X-jwt-error`, `WWW-Authenticate`, the JSON body, and the identity the app reports.
 *
 * The gateway's sidecar runs with OIDC_JWKS_COOLDOWN_SECONDS=0: its clock cannot be moved
 * from here, and the rate limit itself is proven in test/integration/oidc/keys.test.ts.
 */
export function oidcGatewaySuite(start: (oidc: OidcStackEnv) => Promise<Stack>): void {
  let stack: Stack;
  let provider: TestOidcProvider;
  let scratch: string;
  let caFile: string;

  beforeAll(async () => {
    scratch = await mkdtemp(join(tmpdir(), 'gw-e2e-oidc-'));
    const started = await startProviderForGateway(scratch, [
      'svc-e2e',
      'svc-e2e-admin',
      'svc-e2e-orphan',
      'svc-e2e-doomed',
    ]);
    provider = started.provider;
    caFile = started.caFile;
    stack = await start({ env: { ...started.env, OIDC_JWKS_COOLDOWN_SECONDS: '0' } });
    for (const [id, isAdmin] of [
      ['svc-e2e', false],
      ['svc-e2e-admin', true],
      ['svc-e2e-doomed', false],
    ] as const) {
      const res = await call(CLIENTS, {
        method: 'POST',
        headers: apk(stack.adminKey),
        json: {
          name: `${id} client`,
          is_admin: isAdmin,
          generate_api_key: false,
          api_client_id: id,
        },
      });
      expect(res.status, res.text).toBe(201);
    }
  }, 240_000);
  afterAll(async () => {
    await stack?.close();
    await provider?.stop();
    if (scratch) await rm(scratch, { recursive: true, force: true });
  }, 120_000);

  const call = (path: string, options: HttpOptions = {}) => callStack(stack, path, options);
  const bearer = (token: string, path = '/api') =>
    call(path, { headers: { Authorization: `Bearer ${token}` } });
  const now = () => Math.floor(Date.now() / 1000);

  const expectRefused = (res: Awaited<ReturnType<typeof call>>, jwtError: string) => {
    expect(res.status, res.text).toBe(401);
    expect(res.headers['x-jwt-error']).toBe(jwtError);
    expect(res.headers['www-authenticate']).toBe('Bearer error="invalid_token"');
    expect(res.json).toEqual({ errors: [expect.objectContaining({ code: expect.any(String) })] });
  };

  /** Rewrites one `set $name value;` line of the mounted default.conf (spec 5.3: edit, restart). */
  const editDefaultConf = (name: string, value: string) =>
    setDefaultConf(stack.configDir, { [name]: value });

  describe('OpenID Connect bearer tokens through nginx (issue 4)', () => {
    test('a valid token of a matching client passes, and its identity reaches the app', async () => {
      const token = await provider.issueToken('svc-e2e');
      const client = new EngineClient({
        baseUrl: `https://127.0.0.1:${new URL(stack.baseUrl).port}`,
        authorization: `Bearer ${token}`,
        headers: { 'X-Client-Id': 'forged', 'X-Client-Is-Admin': 'true' },
        tls: await stack.tls(),
      });
      await client.connect('admin', 'engine-admin-password');
      const who = await client.whoami();
      expect(who.gateway).toEqual({
        type: 'GatewayIdentity',
        clientId: 'svc-e2e',
        clientName: 'svc-e2e',
        isAdmin: false,
      });
      client.close();
    });

    test('the matching client decides management access', async () => {
      const admin = await bearer(await provider.issueToken('svc-e2e-admin'), CLIENTS);
      expect(admin.status, admin.text).toBe(200);
      const user = await bearer(await provider.issueToken('svc-e2e'), CLIENTS);
      expect(user.status).toBe(403);
    });

    test('refused with 401 and X-jwt-error as the caller sees it', async () => {
      const good = await provider.issueToken('svc-e2e');
      const cases: [string, string][] = [
        [
          await provider.sign({ sub: 'svc-e2e', iat: now() - 900, exp: now() - 300 }),
          'token expired',
        ],
        [await provider.sign({ sub: 'svc-e2e', nbf: now() + 300 }), 'token not yet valid'],
        [
          await provider.sign({ sub: 'svc-e2e', iss: 'https://evil.example' }),
          'unexpected "iss" claim value',
        ],
        [withPayload(good, { sub: 'svc-e2e-admin' }), 'signature verification failed'],
        [withFlippedSignatureBit(good), 'signature verification failed'],
        [unsignedToken(provider, { sub: 'svc-e2e' }), 'unsupported algorithm none'],
        [
          await hs256WithPublicKey(provider, { sub: 'svc-e2e-admin' }),
          'symmetric algorithm "HS256" is not accepted',
        ],
        [
          await signedByStranger(provider, { sub: 'svc-e2e' }, 'never-had'),
          'no key with kid "never-had" at the identity provider',
        ],
        [await provider.issueToken('svc-e2e-orphan'), 'no API client for this token'],
      ];
      for (const [token, jwtError] of cases) expectRefused(await bearer(token), jwtError);
    });

    test('a client deleted a moment ago is refused (within the revocation bound)', async () => {
      const token = await provider.issueToken('svc-e2e-doomed');
      expect((await bearer(token)).status).toBe(200);
      const list = await call(`${CLIENTS}`, { headers: apk(stack.adminKey) });
      const doomed = (
        list.json as { items: { api_key_id: number; api_client_id: string }[] }
      ).items.find((c) => c.api_client_id === 'svc-e2e-doomed')!;
      const deleted = await call(`${CLIENTS}/${doomed.api_key_id}`, {
        method: 'DELETE',
        headers: apk(stack.adminKey),
      });
      expect(deleted.status).toBe(200);
      await expectRevokedWithinBound(
        async () => (await bearer(token)).status,
        Date.now(),
        stack.revocationBoundMs,
      );
      expectRefused(await bearer(token), 'no API client for this token');
    });

    test('keys are not fetched per request; a rotated key is picked up without a restart', async () => {
      const token = await provider.issueToken('svc-e2e');
      expect((await bearer(token)).status).toBe(200);
      const hits = { ...provider.hits };
      for (let i = 0; i < 30; i += 1) expect((await bearer(token)).status).toBe(200);
      expect(provider.hits).toEqual(hits);
      provider.rotate();
      const rotated = await provider.issueToken('svc-e2e');
      expect((await bearer(rotated)).status).toBe(200);
      expect(provider.hits.jwks).toBe(hits.jwks + 1);
      expect((await bearer(token)).status).toBe(200);
    });

    test('ssl_verify "yes" without the CA fails closed; with "no" it passes', async () => {
      const token = await provider.issueToken('svc-e2e');
      await stack.restart({ OIDC_CA_FILE: '' });
      expectRefused(
        await bearer(token),
        'OpenID Connect discovery failed: identity provider TLS certificate not trusted',
      );
      await editDefaultConf('oidc_ssl_verify', '"no"');
      await stack.restart({ OIDC_CA_FILE: '' });
      expect((await bearer(token)).status).toBe(200);
      // Back to the default for the tests that follow (they restart before relying on it).
      await editDefaultConf('oidc_ssl_verify', '"yes"');
    });

    test('the audience option, when set in default.conf, refuses another audience', async () => {
      await editDefaultConf('oidc_audience', '"https://other.gateway.test"');
      await stack.restart({ OIDC_CA_FILE: caFile });
      expectRefused(
        await bearer(await provider.issueToken('svc-e2e')),
        'unexpected "aud" claim value',
      );
      await editDefaultConf('oidc_audience', '""');
      await stack.restart({ OIDC_CA_FILE: caFile });
    });

    test('the provider stopped: cached keys still verify, nothing unverified passes', async () => {
      const seen = await provider.issueToken('svc-e2e');
      const unseen = await provider.issueToken('svc-e2e-admin');
      expect((await bearer(seen)).status).toBe(200);
      await provider.stop();
      expect((await bearer(seen)).status).toBe(200);
      expect((await bearer(unseen, CLIENTS)).status).toBe(200);
      expectRefused(await bearer(withFlippedSignatureBit(seen)), 'signature verification failed');
      expectRefused(
        await bearer(await signedByStranger(provider, { sub: 'svc-e2e' }, 'new-kid')),
        'no key with kid "new-kid" at the identity provider (refreshing the key set failed)',
      );
      // A restart empties the sidecar's caches: with the provider gone, every token is refused.
      await stack.restart({ OIDC_CA_FILE: caFile });
      expectRefused(
        await bearer(seen),
        'OpenID Connect discovery failed: identity provider unreachable',
      );
    });
  });
}
