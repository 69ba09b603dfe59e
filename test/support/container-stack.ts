import { chmod, chown, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type StartedTestContainer, Wait } from 'testcontainers';
import { freePort } from '../../native/ports.js';
import {
  containerLogs,
  createNetwork,
  createVolume,
  engine,
  IMAGES,
  removeLabelled,
  TestContainer,
  testLabels,
  uniqueSuffix,
} from './container-engine.js';
import type { Service, Stack, StackTls } from './stack.js';

/** A host path mounted into a container (testcontainers' BindMount, which it does not export). */
export interface BindMount {
  source: string;
  target: string;
  mode?: 'rw' | 'ro';
}

export interface ContainerStackOptions {
  /** The FQDN of the proxy: certificate CN/SAN and `server_name` (default gateway.e2e.test). */
  fqdn?: string;
  /** Join this network (made by the caller, e.g. beside an OpenID Connect provider). */
  network?: string;
  /** Environment of the gateway on every start; restart(env) adds to it. */
  gatewayEnv?: Record<string, string>;
  /** Files an operator mounts into the gateway (e.g. a provider's CA for OIDC_CA_FILE). */
  gatewayBindMounts?: BindMount[];
  /** Owner of the host configuration directory, as an operator's own folder (default: ours). */
  configDirOwner?: { uid: number; gid: number };
}

export interface ContainerStack extends Stack {
  /** The network the four services share (service names resolve there). */
  readonly network: string;
  /** The running container of a service, for exec and inspect. */
  container(service: Service): StartedTestContainer;
  /** How long the last (re)start took until every service was healthy (ms). */
  readonly lastStartMs: number;
}

const ENGINE_ADMIN_PASSWORD = 'engine-admin-password';
/** Shared by the proxy and the gateway, as docker-compose.yml's gateway-control volume. */
const CONTROL_DIR = '/run/gateway-control';
const KEY_LINE = /NEWLY GENERATED API KEY: (\S+)/;
const STARTUP_TIMEOUT_MS = 90_000;
const STOP_ORDER: Service[] = ['proxy', 'app', 'gateway', 'database'];
const STOP_TIMEOUT_S: Record<Service, number> = { proxy: 5, app: 5, gateway: 5, database: 10 };

/**
 * The four images started with testcontainers, wired as docker-compose.yml wires them:
 * service names as network aliases, PostgreSQL on a named volume, the configuration directory
 * a host folder bind-mounted at /etc/config of the proxy (read-only in the gateway, for nginx's
 * proof), nginx's control socket in a volume
 * the proxy and the gateway share, only
 * the proxy's HTTPS port published (on loopback). restart() is `docker compose down` + `up`
 * without -v: new containers, the same volume and configuration directory.
 */
export async function startContainerStack(
  options: ContainerStackOptions = {},
): Promise<ContainerStack> {
  const id = `gw-e2e-${uniqueSuffix()}`;
  const labels = testLabels({ 'gw.test.stack': id });
  const fqdn = options.fqdn ?? 'gateway.e2e.test';
  const port = await freePort();
  const password = `pw-${uniqueSuffix()}${uniqueSuffix()}`;
  const configDir = await mkdtemp(join(tmpdir(), 'gw-e2e-config-'));
  // The proxy (root in its container) writes here on first start; the test edits the files.
  // mkdtemp makes it owner-only; an operator's folder is usually 0755.
  await chmod(configDir, 0o755);
  if (options.configDirOwner)
    await chown(configDir, options.configDirOwner.uid, options.configDirOwner.gid);

  const network = options.network ?? (await createNetwork(id, labels));
  const volume = await createVolume(`${id}-database`, labels);
  const controlVolume = await createVolume(`${id}-control`, labels);
  const running = new Map<Service, StartedTestContainer>();
  const stopped = new Set<Service>(); // stopped by stopService, not yet removed
  const pastLogs: Record<Service, string> = { proxy: '', gateway: '', app: '', database: '' };
  let lastStartMs = 0;

  const base = (service: Service, image: string) =>
    new TestContainer(image)
      .withNetworkMode(network)
      .withNetworkAliases(service)
      .withLabels({ ...labels, 'gw.test.service': service })
      .withStartupTimeout(STARTUP_TIMEOUT_MS)
      .withWaitStrategy(Wait.forHealthCheck());

  const definitions = (gatewayEnv: Record<string, string>) => ({
    database: base('database', IMAGES.database)
      .withEnvironment({
        POSTGRES_USER: 'gateway',
        POSTGRES_PASSWORD: password,
        POSTGRES_DB: 'gateway',
      })
      .withBindMounts([{ source: volume, target: '/var/lib/postgresql/data' }])
      // docker-compose.yml's check: the air-gapped PostgreSQL image, like the official one, has none.
      .withHealthCheck({
        test: ['CMD-SHELL', 'pg_isready -h 127.0.0.1 -U gateway -d gateway'],
        interval: 1_000,
        timeout: 3_000,
        retries: 30,
        startPeriod: 0,
      }),
    gateway: base('gateway', IMAGES.gateway)
      .withEnvironment({
        DATABASE_URL: `postgres://gateway:${password}@database:5432/gateway`,
        NGINX_CONTROL_SOCKET: `${CONTROL_DIR}/nginx.sock`,
        ...options.gatewayEnv,
        ...gatewayEnv,
      })
      .withBindMounts([
        { source: controlVolume, target: CONTROL_DIR },
        // Read-only, for nginx's proof (nginx/conf.d/sidecar-proof.key), as docker-compose.yml.
        { source: configDir, target: '/etc/config', mode: 'ro' },
        ...(options.gatewayBindMounts ?? []),
      ]),
    app: base('app', IMAGES.app).withEnvironment({
      ENGINE_ADMIN_USER: 'admin',
      ENGINE_ADMIN_PASSWORD,
    }),
    proxy: base('proxy', IMAGES.proxy)
      .withEnvironment({
        GATEWAY_FQDN: fqdn,
        GATEWAY_APP_UPSTREAM: 'app:8080',
        GATEWAY_SIDECAR_UPSTREAM: 'gateway:8081',
        // The sidecar's user (node, group 1000) may read the proof the proxy makes.
        GATEWAY_PROOF_GID: '1000',
      })
      .withBindMounts([
        { source: configDir, target: '/etc/config' },
        { source: controlVolume, target: CONTROL_DIR },
      ])
      .withLoopbackPort(443, port),
  });

  /** `up`: database, then gateway and app, then proxy, each once healthy (compose's order). */
  const startAll = async (gatewayEnv: Record<string, string>) => {
    const t0 = performance.now();
    const defs = definitions(gatewayEnv);
    running.set('database', await defs.database.start());
    const [gateway, app] = await Promise.all([defs.gateway.start(), defs.app.start()]);
    running.set('gateway', gateway);
    running.set('app', app);
    running.set('proxy', await defs.proxy.start());
    lastStartMs = performance.now() - t0;
  };

  /** `down` without -v: stop in reverse order, keep each log, remove the containers. */
  const stopAll = async () => {
    for (const service of STOP_ORDER) {
      const container = running.get(service);
      if (!container) continue;
      if (!stopped.has(service)) {
        await container.stop({ timeout: STOP_TIMEOUT_S[service] * 1000, remove: false });
      }
      pastLogs[service] += await containerLogs(container.getId()).catch(() => '');
      await (await engine()).container.dockerode
        .getContainer(container.getId())
        .remove({ force: true })
        .catch(() => {});
      running.delete(service);
      stopped.delete(service);
    }
  };

  const cleanUp = async () => {
    await removeLabelled('gw.test.stack', id);
    await rm(configDir, { recursive: true, force: true });
  };

  let adminKey: string;
  try {
    await startAll({ API_KEY_CREATE: 'true' });
    const printed = KEY_LINE.exec(await containerLogs(running.get('gateway')!.getId()));
    if (!printed) throw new Error('the gateway printed no NEWLY GENERATED API KEY line');
    adminKey = printed[1]!;
  } catch (err) {
    await cleanUp().catch(() => {});
    throw err;
  }

  return {
    kind: 'containers',
    baseUrl: `https://${fqdn}:${port}`,
    fqdn,
    adminKey,
    configDir,
    network,
    // Revocation is pushed: the pair that served DELETE refuses the key before it answers.
    revocationBoundMs: 0,
    get lastStartMs() {
      return lastStartMs;
    },
    container(service) {
      const container = running.get(service);
      if (!container) throw new Error(`${service} is not running`);
      return container;
    },
    async tls(): Promise<StackTls> {
      return {
        ca: await readFile(join(configDir, 'nginx/ssl/nginx.crt'), 'utf8'),
        servername: fqdn,
      };
    },
    async restart(env = {}) {
      await stopAll();
      await startAll({ API_KEY_CREATE: 'false', ...env });
    },
    async logs(service) {
      const container = running.get(service);
      const current = container ? await containerLogs(container.getId()).catch(() => '') : '';
      return pastLogs[service] + current;
    },
    async stopService(service) {
      const container = running.get(service);
      if (!container) throw new Error(`${service} is not running`);
      await container.stop({ timeout: STOP_TIMEOUT_S[service] * 1000, remove: false });
      stopped.add(service);
    },
    async close() {
      try {
        await stopAll();
      } finally {
        await cleanUp();
      }
    },
  };
}
