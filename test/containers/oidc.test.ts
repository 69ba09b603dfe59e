import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { EngineClient } from '../../engine/client/index.js';
import {
  createNetwork,
  removeLabelled,
  testLabels,
  uniqueSuffix,
} from '../support/container-engine.js';
import { type ProviderContainer, startProviderContainer } from '../support/container-oidc.js';
import { type ContainerStack, startContainerStack } from '../support/container-stack.js';
import { setDefaultConf } from '../support/default-conf.js';
import { type HttpOptions, http } from '../support/http.js';
import { CLIENTS } from '../support/management.js';
import { withFlippedSignatureBit } from '../support/oidc-tokens.js';
import { apk } from '../support/sidecar.js';

/**
 * Spec 5.3 as an operator does it, with the OpenID Connect provider in its own container on
 * the stack's network (test/containers/oidc-provider/, HTTPS with a certificate from a test CA):
 *   1. first start with the defaults (API keys), bootstrap admin key (spec 5.2);
 *   2. create the token clients: generate_api_key false, api_client_id = the token's `sub`;
 *   3. edit config/nginx/conf.d/default.conf in the mounted directory: $api_keys_enabled false,
 *      $open_id_connect_enabled true, the options of 5.3.3 with the provider's discovery URL;
 *   4. mount the provider's CA into the gateway and name it in OIDC_CA_FILE; restart.
 * Then tokens work and API keys are refused. The provider's behaviour in depth (rotation,
 * provider down, every refusal text) is test/e2e/oidc-native.test.ts: that suite drives a
 * provider in its own process (signs with its keys, rotates them, counts its requests, stops
 * it), which a provider in a container does not offer without a control API of its own.
 */

const PROVIDER_ALIAS = 'idp.e2e.test';
const ROBOT = 'svc-robot'; // a caller: non-admin
const OPS = 'svc-ops'; // an admin caller
const STRANGER = 'svc-stranger'; // known to the provider, no API client at the gateway
const CA_IN_GATEWAY = '/etc/gateway/oidc-ca.pem';

let network: string;
let provider: ProviderContainer;
let stack: ContainerStack;
let scratch: string;
let caFile: string;
const labels = testLabels({ 'gw.test.stack': `gw-oidc-${uniqueSuffix()}` });

const call = async (path: string, options: HttpOptions = {}) =>
  http(`${stack.baseUrl}${path}`, {
    ...options,
    tls: { ...(await stack.tls()) },
    connectTo: '127.0.0.1',
  });
const bearer = (token: string, path = '/api') =>
  call(path, { headers: { Authorization: `Bearer ${token}` } });

beforeAll(async () => {
  network = await createNetwork(labels['gw.test.stack']!, labels);
  provider = await startProviderContainer({
    network,
    alias: PROVIDER_ALIAS,
    clients: [ROBOT, OPS, STRANGER],
    labels,
  });
  scratch = await mkdtemp(join(tmpdir(), 'gw-oidc-ca-'));
  caFile = join(scratch, 'oidc-ca.pem');
  await writeFile(caFile, provider.caPem, { mode: 0o644 });
  stack = await startContainerStack({
    network,
    gatewayBindMounts: [{ source: caFile, target: CA_IN_GATEWAY, mode: 'ro' }],
  });
}, 240_000);

afterAll(async () => {
  await stack?.close();
  await removeLabelled('gw.test.stack', labels['gw.test.stack']);
  if (scratch) await rm(scratch, { recursive: true, force: true });
}, 120_000);

describe('spec 5.3 in containers: bearer tokens from a provider in another container', () => {
  test('step 1-2: the bootstrap admin key creates the token clients (generate_api_key false)', async () => {
    for (const [id, isAdmin] of [
      [ROBOT, false],
      [OPS, true],
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
      expect(res.json).not.toHaveProperty('token');
    }
  });

  test('step 3: default.conf in the mounted directory switches to OpenID Connect only', async () => {
    await setDefaultConf(stack.configDir, {
      api_keys_enabled: 'false',
      open_id_connect_enabled: 'true',
      oidc_discovery: `"${provider.discoveryUrl}"`,
      oidc_ssl_verify: '"yes"',
      oidc_accept_unsupported_alg: 'false',
      oidc_accept_none_alg: 'false',
      oidc_redirect_uri: '""',
    });
    // Without the provider's CA the sidecar must not trust it (ssl_verify "yes"): the token
    // is refused for that reason alone, which shows the CA given below is what lets it pass.
    await stack.restart();
    const res = await bearer(await provider.issueToken(ROBOT));
    expect(res.status, res.text).toBe(401);
    expect(res.headers['x-jwt-error']).toBe(
      'OpenID Connect discovery failed: identity provider TLS certificate not trusted',
    );
  });

  test("step 4: with the provider's CA in OIDC_CA_FILE, a token reaches the app with its identity", async () => {
    await stack.restart({ OIDC_CA_FILE: CA_IN_GATEWAY });
    const client = new EngineClient({
      baseUrl: `https://127.0.0.1:${new URL(stack.baseUrl).port}`,
      authorization: `Bearer ${await provider.issueToken(ROBOT)}`,
      headers: { 'X-Client-Id': 'forged', 'X-Client-Is-Admin': 'true' },
      tls: await stack.tls(),
    });
    await client.connect('admin', 'engine-admin-password');
    expect((await client.whoami()).gateway).toEqual({
      type: 'GatewayIdentity',
      clientId: ROBOT,
      clientName: ROBOT,
      isAdmin: false,
    });
    client.close();
    // The sidecar fetched discovery and keys from the provider's container, over its network.
    const requests = await provider.logs();
    expect(requests).toMatch(/GET \/\.well-known\/openid-configuration from \S+/);
    expect(requests).toMatch(/GET \/jwks from \S+/);
  });

  test('the matching API client decides management access', async () => {
    const ops = await bearer(await provider.issueToken(OPS), CLIENTS);
    expect(ops.status, ops.text).toBe(200);
    const robot = await bearer(await provider.issueToken(ROBOT), CLIENTS);
    expect(robot.status).toBe(403);
  });

  test('API keys are refused: the bootstrap key, and a key made now by an admin token', async () => {
    for (const path of ['/api', CLIENTS]) {
      const res = await call(path, { headers: apk(stack.adminKey) });
      expect(res.status, path).toBe(401);
      expect(res.json).toEqual({ errors: [expect.objectContaining({ code: 'METHOD_DISABLED' })] });
      expect(res.text).not.toContain('/resources/json/service/session');
    }
    const made = await call(CLIENTS, {
      method: 'POST',
      headers: { Authorization: `Bearer ${await provider.issueToken(OPS)}` },
      json: { name: `late-key-${uniqueSuffix()}`, is_admin: true, generate_api_key: true },
    });
    expect(made.status, made.text).toBe(201);
    const { token } = made.json as { token: string };
    expect((await call('/api', { headers: apk(token) })).status).toBe(401);
  });

  test('a failed token: 401 with X-jwt-error, never the app', async () => {
    const cases: [string, string][] = [
      [withFlippedSignatureBit(await provider.issueToken(ROBOT)), 'signature verification failed'],
      [await provider.issueToken(STRANGER), 'no API client for this token'],
    ];
    for (const [token, jwtError] of cases) {
      const res = await bearer(token);
      expect(res.status, res.text).toBe(401);
      expect(res.headers['x-jwt-error']).toBe(jwtError);
      expect(res.headers['www-authenticate']).toBe('Bearer error="invalid_token"');
      expect(res.text).not.toContain('/resources/json/service/session');
    }
    const none = await call('/api');
    expect(none.status).toBe(401);
    expect(none.headers['www-authenticate']).toBe('Bearer');
  });
});
