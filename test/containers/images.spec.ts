import {
  GenericContainer,
  Network,
  type StartedNetwork,
  type StartedTestContainer,
  Wait,
} from 'testcontainers';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { http } from '../support/http.js';
import {
  IMAGES,
  removeSessionContainers,
  requireContainerEngine,
  waitForLogLine,
} from './support.js';

/**
 * The four images wired together as docker-compose.yml wires them (service names as network
 * aliases, the same environment), started with testcontainers: every image's own health
 * check must pass, and an authenticated request must go through nginx, the sidecar and the
 * engine. Run: npx vitest run --config test/containers/vitest.config.ts
 */

const PASSWORD = 'container-test-only';
const started: StartedTestContainer[] = [];
let network: StartedNetwork | undefined;
let proxy: StartedTestContainer;
let gateway: StartedTestContainer;
let app: StartedTestContainer;
let bootstrapKey: string;
let baseUrl: string;
let tls: { ca: string; servername: string };

/** Everything each container has logged, printed when a test fails. */
const logs = new Map<string, string>();

async function start(container: GenericContainer): Promise<StartedTestContainer> {
  const running = await container.withStartupTimeout(90_000).start();
  started.push(running);
  const name = running.getNetworkNames().length ? running.getName() : running.getId();
  logs.set(name, '');
  (await running.logs()).on('data', (chunk: Buffer | string) => {
    logs.set(name, (logs.get(name) ?? '') + chunk.toString());
  });
  return running;
}

afterEach(async (context) => {
  if (context.task.result?.state !== 'fail') return;
  await new Promise((resolve) => setTimeout(resolve, 1000)); // let the log streams catch up
  for (const [name, text] of logs) {
    console.error(`--- ${name} (last lines)\n${text.split('\n').slice(-30).join('\n')}`);
  }
});

beforeAll(async () => {
  await requireContainerEngine();
  const t0 = performance.now();
  network = await new Network().start();
  await start(
    new GenericContainer(IMAGES.database)
      .withNetwork(network)
      .withNetworkAliases('database')
      .withEnvironment({
        POSTGRES_USER: 'gateway',
        POSTGRES_PASSWORD: PASSWORD,
        POSTGRES_DB: 'gateway',
      })
      .withHealthCheck({
        test: ['CMD-SHELL', 'pg_isready -h 127.0.0.1 -U gateway -d gateway'],
        interval: 1000,
        timeout: 3000,
        retries: 30,
        startPeriod: 0,
      })
      .withWaitStrategy(Wait.forHealthCheck()),
  );
  [gateway, app] = await Promise.all([
    start(
      new GenericContainer(IMAGES.gateway)
        .withNetwork(network)
        .withNetworkAliases('gateway')
        .withEnvironment({
          DATABASE_URL: `postgres://gateway:${PASSWORD}@database:5432/gateway`,
          API_KEY_CREATE: 'true',
        })
        .withWaitStrategy(Wait.forHealthCheck()),
    ),
    start(
      new GenericContainer(IMAGES.app)
        .withNetwork(network)
        .withNetworkAliases('app')
        .withWaitStrategy(Wait.forHealthCheck()),
    ),
  ]);
  const key = await waitForLogLine(
    await gateway.logs(),
    /NEWLY GENERATED API KEY:?\s+(\d+\.[^\s"]+)/,
    10_000,
  );
  bootstrapKey = key[1]!;
  proxy = await start(
    new GenericContainer(IMAGES.proxy)
      .withNetwork(network)
      .withNetworkAliases('proxy')
      .withEnvironment({
        GATEWAY_FQDN: 'localhost',
        GATEWAY_APP_UPSTREAM: 'app:8080',
        GATEWAY_SIDECAR_UPSTREAM: 'gateway:8081',
      })
      .withExposedPorts(443)
      .withWaitStrategy(Wait.forHealthCheck()),
  );
  baseUrl = `https://${proxy.getHost()}:${proxy.getMappedPort(443)}`;
  const certificate = await proxy.exec(['cat', '/etc/config/nginx/ssl/nginx.crt']);
  expect(certificate.exitCode).toBe(0);
  tls = { ca: certificate.output, servername: 'localhost' };
  console.info(`containers: four images healthy in ${Math.round(performance.now() - t0)} ms`);
}, 240_000);

afterAll(async () => {
  for (const container of started.reverse()) await container.stop({ timeout: 5_000 });
  await removeSessionContainers();
  await network?.stop();
}, 60_000);

describe('the images, wired as in docker-compose.yml', () => {
  test('nginx serves the unique certificate for the FQDN and refuses a request without a key', async () => {
    const response = await http(`${baseUrl}/`, { tls });
    expect(response.status).toBe(401);
    expect(response.json).toMatchObject({ errors: [expect.anything()] });
  });

  test('the bootstrap key reaches the management routes through nginx and the sidecar', async () => {
    const response = await http(`${baseUrl}/v1/management/api-clients/`, {
      headers: { Authorization: `apk ${bootstrapKey}`, Accept: 'application/json' },
      tls,
    });
    expect(response.status, response.text).toBe(200);
  });

  test('an authenticated request reaches the engine behind the gateway', async () => {
    const response = await http(`${baseUrl}/api`, {
      headers: { Authorization: `apk ${bootstrapKey}` },
      tls,
    });
    expect(response.status).toBe(200);
  });

  test('the sidecar and the engine run unprivileged; nginx workers too', async () => {
    for (const container of [gateway, app]) {
      const id = await container.exec(['id', '-u']);
      expect(id.output.trim()).toBe('1000');
    }
    // No ps in these images: the owners of the nginx worker processes, from /proc.
    const workers = await proxy.exec([
      'sh',
      '-c',
      'for p in /proc/[0-9]*; do [ "$(head -c 13 "$p/cmdline")" = "nginx: worker" ] && stat -c %U "$p"; done; true',
    ]);
    const users = workers.output.trim().split('\n');
    expect(users.length).toBeGreaterThan(0);
    expect(new Set(users)).toEqual(new Set(['www-data']));
  });
});
