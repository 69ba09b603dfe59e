import { request } from 'node:https';
import {
  GenericContainer,
  getContainerRuntimeClient,
  Network,
  type StartedNetwork,
  type StartedTestContainer,
  Wait,
} from 'testcontainers';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import {
  GatewayContainer,
  GatewayStartError,
  type StartedGatewayContainer,
} from '../../testcontainers/index.js';
import { IMAGES, testLabels } from '../support/container-engine.js';

/**
 * The testcontainers module users put in their own tests (issue 21 item 1), from the sources:
 * start in front of an application container on the user's network, CA trust, the admin key,
 * create and revoke, and starts that fail, each reported clearly with nothing left behind.
 * The images are the run's (GW_*_IMAGE, set by the global setup). The packed package and a
 * host application: test/containers/packed-package.test.ts.
 */

let network: StartedNetwork;
let app: StartedTestContainer;
let gateway: StartedGatewayContainer;

async function gatewayContainers(): Promise<number> {
  const client = await getContainerRuntimeClient();
  const filters = JSON.stringify({ label: ['gw.gateway'] });
  return (await client.container.dockerode.listContainers({ all: true, filters })).length;
}

beforeAll(async () => {
  network = await new Network().start();
  // The user's application: here the project's engine, on the user's network as "engine".
  app = await new GenericContainer(IMAGES.app)
    .withNetwork(network)
    .withNetworkAliases('engine')
    .withLabels(testLabels())
    .withEnvironment({ ENGINE_ADMIN_USER: 'admin', ENGINE_ADMIN_PASSWORD: 'engine-password' })
    // The image's probe run by testcontainers (podman here schedules no health checks).
    .withWaitStrategy(
      Wait.forSuccessfulCommand(
        'node /usr/local/lib/gateway/healthcheck.mjs "http://127.0.0.1:8080/api" 200-499',
      ),
    )
    .withStartupTimeout(120_000)
    .start();
  const t0 = performance.now();
  gateway = await new GatewayContainer()
    .withNetwork(network)
    .withApp('engine:8080')
    .withSettings({ auth_cache: { max_age_ms: 5000 } })
    .start();
  console.info(`GatewayContainer started in ${Math.round(performance.now() - t0)} ms`);
}, 240_000);

afterAll(async () => {
  await gateway?.stop();
  await app?.stop().catch(() => {});
  await network?.stop().catch(() => {});
}, 120_000);

describe('GatewayContainer in front of an application container', () => {
  test('serves HTTPS at its base URL, trusted through the CA it hands out', async () => {
    expect(gateway.getBaseUrl()).toMatch(/^https:\/\/localhost:\d+$/);
    expect(gateway.getCaCertificate()).toMatch(/^-----BEGIN CERTIFICATE-----/);
    const answer = await gateway.request('/api');
    expect(answer.status).toBe(401);
    expect(JSON.parse(answer.body)).toEqual({
      errors: [expect.objectContaining({ code: 'MISSING_CREDENTIALS' })],
    });
    // Without that CA, Node refuses the gateway: the CA is what makes it trusted.
    const untrusted = await new Promise<string>((resolve) => {
      request(new URL('/api', gateway.getBaseUrl()), (res) => resolve(`status ${res.statusCode}`))
        .on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message))
        .end();
    });
    expect(untrusted).toBe('DEPTH_ZERO_SELF_SIGNED_CERT');
  });

  test('the admin key manages clients', async () => {
    const list = await gateway.request('/v1/management/api-clients/', {
      key: gateway.getAdminKey(),
    });
    expect(list.status).toBe(200);
    expect(JSON.parse(list.body).items.length).toBeGreaterThanOrEqual(1);
  });

  test('a created client gets through to the app; once revoked it is refused', async () => {
    const client = await gateway.createClient({ name: 'module-test' });
    expect(client).toEqual({
      id: expect.any(Number),
      name: 'module-test',
      isAdmin: false,
      key: expect.stringMatching(/^\d+\.\S+$/),
    });
    expect((await gateway.request('/api', { key: client.key })).status).toBe(200);
    // Not an admin: management is forbidden.
    expect((await gateway.request('/v1/management/api-clients/', { key: client.key })).status).toBe(
      403,
    );
    await gateway.revokeClient(client);
    const refused = await gateway.request('/api', { key: client.key });
    expect(refused.status).toBe(401);
  });
});

describe('starts that fail say why and leave nothing behind', () => {
  test('bad settings: every problem listed, no container started', async () => {
    const before = await gatewayContainers();
    const error = await new GatewayContainer()
      .withHostApp(8080)
      .withSettings({ tls: { protocols: ['SSLv3'] }, https_port: 8443, no_such_key: 1 })
      .start()
      .catch((err: unknown) => err);
    expect(error).toBeInstanceOf(GatewayStartError);
    expect((error as GatewayStartError).code).toBe('INVALID_OPTIONS');
    const message = (error as Error).message;
    expect(message).toContain('https_port: set by GatewayContainer');
    expect(message).toMatch(/tls\.protocols/);
    expect(message).toMatch(/no_such_key/);
    expect(await gatewayContainers()).toBe(before);
  });

  test('no application given: says how to give one', async () => {
    await expect(new GatewayContainer().start()).rejects.toThrow(/withApp\("name:port"\)/);
  });

  test('an image that is not there, under a name of your own: named, nothing built', async () => {
    const error = await new GatewayContainer()
      .withHostApp(8080)
      .withImages({ proxy: 'localhost/no-such-proxy:1' })
      .start()
      .catch((err: unknown) => err);
    expect((error as GatewayStartError).code).toBe('IMAGE_MISSING');
    expect((error as Error).message).toContain('localhost/no-such-proxy:1');
  });

  test('a database it cannot reach: NOT_STARTED with the sidecar log, containers removed', async () => {
    const before = await gatewayContainers();
    const error = await new GatewayContainer()
      .withHostApp(8080)
      .withDatabaseUrl('postgres://gateway:x@no-such-database.invalid:5432/gateway')
      .withStartupTimeout(15_000)
      .start()
      .catch((err: unknown) => err);
    expect((error as GatewayStartError).code).toBe('NOT_STARTED');
    expect((error as Error).message).toMatch(/the gateway did not start/);
    expect((error as Error).message).toContain('--- gateway (last lines) ---');
    expect(await gatewayContainers()).toBe(before);
  }, 60_000);
});
