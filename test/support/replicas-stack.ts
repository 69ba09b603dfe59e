import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { packageRoot } from '../../common/package-root.js';
import { freePort } from '../../native/ports.js';
import { engine, IMAGES, removeLabelled, uniqueSuffix } from './container-engine.js';
import { type HttpOptions, type HttpResponse, http } from './http.js';

/**
 * The repository's docker-compose.replicas.yml, driven by `docker-compose` (Debian's 1.29)
 * with the images under test, a project of its own and a free port on loopback; the bootstrap
 * key is asked of gateway-1 on a copy of the file (spec 5.2's edit). Each pair is reached
 * directly at the address of its namespace (pair-N) on the composition's network, the
 * balancer at the published port. Shared by the container suite and `npm run bench:replicas`.
 */

// The repository, from the sources (vitest) and from dist/ (the bench) alike.
const ROOT = packageRoot();
const COMPOSE = 'docker-compose';
const PROJECT_LABEL = 'com.docker.compose.project';
export const PAIRS = ['pair-1', 'pair-2', 'pair-3'] as const;
export type Pair = (typeof PAIRS)[number];

export interface ReplicasStack {
  project: string;
  port: number;
  adminKey: string;
  ca: string;
  /** The compose command with its arguments, as docker/rolling-restart.sh takes it (COMPOSE). */
  composeCommand: string;
  env: NodeJS.ProcessEnv;
  compose(args: string[], timeoutMs?: number): Promise<string>;
  /** A request through the balancer. */
  viaBalancer(path: string, options?: HttpOptions): Promise<HttpResponse>;
  /** A pair's address on the composition's network (its nginx listens on 443 there). */
  address(pair: Pair): string;
  /** A request straight to one pair's nginx, past the balancer. */
  viaPair(pair: Pair, path: string, options?: HttpOptions): Promise<HttpResponse>;
  /** The balancer's view of a pair: `status` (UP, DOWN, MAINT...) of HAProxy's `show stat`. */
  pairStatus(pair: Pair): Promise<string>;
  /** The id of the running container of a service. */
  containerId(service: string): Promise<string>;
  down(): Promise<void>;
}

export interface ReplicasOptions {
  /** The app logs one line per request (ENGINE_LOG_REQUESTS); off for the bench. */
  appLogsRequests?: boolean;
  /**
   * One rate limit across the pairs: the profile global-limits (the redis service) and
   * RATE_LIMITS_STORE=redis, with these settings of the sidecars (RATE_LIMITS_SYNC_MS...).
   */
  globalLimits?: Record<string, string>;
}

export async function startReplicas(
  name = 'replicas',
  options: ReplicasOptions = {},
): Promise<ReplicasStack> {
  const project = `gwtest-${process.env.GW_TEST_PID || process.pid}-${name}-${uniqueSuffix()}`;
  const original = await readFile(join(ROOT, 'docker-compose.replicas.yml'), 'utf8');
  // Only gateway-1's own line: one bootstrap key, not one per pair.
  const own = /^( {6}API_KEY_CREATE: )"false"$/m;
  if (!own.test(original))
    throw new Error('docker-compose.replicas.yml: no API_KEY_CREATE of gateway-1');
  const scratch = await mkdtemp(join(tmpdir(), 'gw-replicas-'));
  const file = join(scratch, 'docker-compose.replicas.yml');
  await writeFile(file, original.replace(own, '$1"true"'));
  const port = await freePort();
  const {
    GATEWAY_CONFIG: _config,
    GATEWAY_FQDN: _fqdn,
    POSTGRES_PASSWORD: _password,
    ...inherited
  } = process.env;
  const env: NodeJS.ProcessEnv = {
    ...inherited,
    COMPOSE_PROJECT_NAME: project,
    GATEWAY_HTTPS_BIND: '127.0.0.1',
    GATEWAY_HTTPS_PORT: String(port),
    GW_PROXY_IMAGE: IMAGES.proxy,
    GW_GATEWAY_IMAGE: IMAGES.gateway,
    GW_APP_IMAGE: IMAGES.app,
    GW_POSTGRES_IMAGE: IMAGES.database,
    GW_BALANCER_IMAGE: IMAGES.balancer,
    GW_BALANCER_BASE_IMAGE: IMAGES.balancerBase,
    ENGINE_LOG_REQUESTS: options.appLogsRequests ? 'true' : 'false',
    GW_REDIS_IMAGE: IMAGES.redis,
    ...(options.globalLimits ? { RATE_LIMITS_STORE: 'redis', ...options.globalLimits } : {}),
  };
  const composeArgs = [
    '-f',
    file,
    '--project-directory',
    ROOT,
    '--ansi',
    'never',
    ...(options.globalLimits ? ['--profile', 'global-limits'] : []),
  ];
  const compose = (args: string[], timeoutMs = 240_000) =>
    new Promise<string>((resolve, reject) => {
      execFile(
        COMPOSE,
        [...composeArgs, ...args],
        { cwd: ROOT, env, timeout: timeoutMs, maxBuffer: 32 * 1024 * 1024 },
        (err, stdout, stderr) => {
          if (!err) resolve(stdout);
          else
            reject(
              new Error(
                `${COMPOSE} ${args.join(' ')} failed: ${err.message}\n${stdout}\n${stderr}`,
              ),
            );
        },
      );
    });
  const down = async () => {
    // podman removes a pair's holder only after the containers in its namespace are gone:
    // the first `down` may leave the holders, the second removes them and the volumes.
    for (let i = 0; i < 3; i++) await compose(['down', '-v', '--timeout', '10']).catch(() => '');
    await removeLabelled(PROJECT_LABEL, project).catch(() => []);
    await rm(scratch, { recursive: true, force: true });
  };

  try {
    await compose(['up', '-d', '--no-build']);
    const docker = (await engine()).container.dockerode;
    const containerOf = async (service: string) => {
      const filters = JSON.stringify({
        label: [`${PROJECT_LABEL}=${project}`, `com.docker.compose.service=${service}`],
      });
      const [info] = await docker.listContainers({ filters });
      if (!info) throw new Error(`no running container of ${service}`);
      return info;
    };
    const addresses = new Map<Pair, string>();
    for (const pair of PAIRS) {
      const inspect = await docker.getContainer((await containerOf(pair)).Id).inspect();
      const ip = Object.values(inspect.NetworkSettings.Networks ?? {})[0]?.IPAddress;
      if (!ip) throw new Error(`${pair} has no address`);
      addresses.set(pair, ip);
    }
    const ca = await compose(['exec', '-T', 'proxy-1', 'cat', '/etc/config/nginx/ssl/nginx.crt']);
    const tls = { ca, servername: 'localhost' };
    const viaBalancer = (path: string, options: HttpOptions = {}) =>
      http(`https://localhost:${port}${path}`, { tls, connectTo: '127.0.0.1', ...options });
    const viaPair = (pair: Pair, path: string, options: HttpOptions = {}) =>
      http(`https://localhost${path}`, { tls, connectTo: addresses.get(pair)!, ...options });
    const pairStatus = async (pair: Pair) => {
      const csv = await compose(['exec', '-T', 'balancer', 'balancer-ctl', 'show stat']);
      const lines = csv.split('\n');
      const header = (lines[0] ?? '').replace(/^# /, '').split(',');
      const row = lines.map((l) => l.split(',')).find((f) => f[0] === 'pairs' && f[1] === pair);
      return row?.[header.indexOf('status')] ?? 'missing';
    };
    // Ready when the bootstrap key works through the balancer on every pair.
    let adminKey = '';
    const deadline = Date.now() + 120_000;
    for (;;) {
      adminKey ||=
        /NEWLY GENERATED API KEY: (\S+)/.exec(
          await compose(['logs', '--no-color', 'gateway-1']),
        )?.[1] ?? '';
      const statuses = await Promise.all(PAIRS.map(pairStatus));
      if (adminKey && statuses.every((s) => s === 'UP')) {
        const res = await viaBalancer('/api', { headers: { Authorization: `apk ${adminKey}` } });
        if (res.status === 200) break;
      }
      if (Date.now() > deadline) {
        // What a pair that is not UP went through: its containers' logs and its namespace's
        // resolver, in the error (the stack is removed right after).
        const why: string[] = [];
        for (const [i, status] of statuses.entries()) {
          if (status === 'UP') continue;
          for (const service of [`pair-${i + 1}`, `gateway-${i + 1}`, `proxy-${i + 1}`]) {
            const logs = await compose(['logs', '--no-color', '--tail', '60', service]).catch(
              (e: Error) => e.message,
            );
            why.push(`--- ${service} (${status}) ---\n${logs}`);
          }
          why.push(
            await compose([
              'exec',
              '-T',
              `pair-${i + 1}`,
              'cat',
              '/etc/resolv.conf',
              '/etc/hosts',
            ]).catch((e: Error) => e.message),
          );
        }
        throw new Error(
          `the replicas are not ready after 120 s (pairs: ${statuses.join(', ')})\n${why.join('\n')}`,
        );
      }
      await new Promise((r) => setTimeout(r, 500));
    }
    return {
      project,
      port,
      adminKey,
      ca,
      composeCommand: [COMPOSE, ...composeArgs, '-p', project].join(' '),
      env,
      compose,
      viaBalancer,
      address: (pair) => addresses.get(pair)!,
      viaPair,
      pairStatus,
      containerId: async (service) => (await containerOf(service)).Id,
      down,
    };
  } catch (err) {
    await down();
    throw err;
  }
}
