import { execFile, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { getContainerRuntimeClient } from 'testcontainers';
import {
  LABEL_PID,
  LABEL_RUN,
  removeLabelled,
  stopOrphanDns,
} from '../support/container-engine.js';

/**
 * Global setup of the container suite (test/containers/vitest.config.ts), so that `npm test`
 * needs nothing exported beforehand and always tests the tree it runs on:
 *   1. points testcontainers at the engine: DOCKER_HOST as given, else podman's socket when it
 *      answers; no reaper (its image cannot be pulled here: every test removes what it made);
 *   2. removes what killed runs left behind (containers, networks, volumes, image tags, and a
 *      dnsmasq whose network is gone: test/support/orphan-dns.ts);
 *   3. (re)builds the project's images from the work tree with
 *      docker/build-airgapped-images.sh (base images too when missing), and the test OpenID
 *      Connect provider's image;
 *   4. tags every image under test for this run (GW_*_IMAGE), so that another build on the
 *      machine meanwhile cannot swap an image under the suite.
 * Anything missing fails the run with what to do; nothing is skipped.
 */

const ROOT = join(import.meta.dirname, '../..');
const PODMAN_SOCKET = '/run/podman/podman.sock';
const TICKER_PID_FILE = '/run/podman/healthcheck-ticker.pid';
const SETUP =
  'run `npm test` as root, whose set-up step (`bash scripts/ensure-system.sh test`) installs podman, starts its Docker-compatible ' +
  `API at ${PODMAN_SOCKET} with a health-check ticker, and builds the base images)`;
const OIDC_PROVIDER_REPO = 'localhost/gw-test-oidc-provider';
const run = promisify(execFile);

/** GET /_ping on a Docker-compatible API (unix:// or tcp://); true when it answers OK. */
function pings(dockerHost: string): Promise<boolean> {
  const target = dockerHost.startsWith('unix://')
    ? { socketPath: dockerHost.slice('unix://'.length), path: '/_ping' }
    : { host: new URL(dockerHost).hostname, port: new URL(dockerHost).port, path: '/_ping' };
  return new Promise((resolve) => {
    const req = request({ ...target, timeout: 3_000 }, (res) => {
      res.resume();
      resolve(res.statusCode === 200);
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(false));
    req.end();
  });
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function podman(...args: string[]): Promise<string> {
  return (await run('podman', args, { maxBuffer: 16 * 1024 * 1024 })).stdout;
}

/** Runs a command, its output kept; on failure the error carries the output's tail. */
function runLogged(command: string, args: string[], env: NodeJS.ProcessEnv): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString();
    });
    child.stderr.on('data', (c: Buffer) => {
      out += c.toString();
    });
    child.on('error', reject);
    child.on('close', (code) => {
      if (code === 0) resolve(out);
      else {
        const tail = out.trim().split('\n').slice(-40).join('\n');
        reject(new Error(`${command} ${args.join(' ')} failed (exit ${code}):\n${tail}`));
      }
    });
  });
}

async function pointAtEngine(): Promise<void> {
  if (!process.env.DOCKER_HOST && (await pings(`unix://${PODMAN_SOCKET}`))) {
    process.env.DOCKER_HOST = `unix://${PODMAN_SOCKET}`;
  }
  process.env.TESTCONTAINERS_RYUK_DISABLED = 'true';
  process.env.TESTCONTAINERS_HOST_OVERRIDE ||= '127.0.0.1';
  const host = process.env.DOCKER_HOST;
  if (!host && existsSync(PODMAN_SOCKET) && process.getuid?.() !== 0) {
    throw new Error(
      `container suite: ${PODMAN_SOCKET} is root's and does not answer uid ${process.getuid?.()}; ` +
        'run the tests as root (the images are built with podman as root too)',
    );
  }
  if (!host) {
    throw new Error(
      `container suite: no container engine (DOCKER_HOST is unset and ${PODMAN_SOCKET} does not answer); ${SETUP}`,
    );
  }
  if (!(await pings(host))) {
    throw new Error(
      `container suite: the container engine at DOCKER_HOST=${host} does not answer; ${SETUP}`,
    );
  }
  if (
    host === `unix://${PODMAN_SOCKET}` &&
    !existsSync('/run/systemd/system') &&
    !tickerRunning()
  ) {
    throw new Error(
      'container suite: podman runs no health checks without systemd, and the health-check ' +
        `ticker (docker/podman-healthcheck-ticker.sh, pid file ${TICKER_PID_FILE}) is not running: ` +
        `containers would never become healthy; ${SETUP}`,
    );
  }
  await getContainerRuntimeClient(); // testcontainers agrees
}

function tickerRunning(): boolean {
  try {
    const pid = Number(readFileSync(TICKER_PID_FILE, 'utf8').trim());
    return (
      pid > 0 && readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('podman-healthcheck-ticker')
    );
  } catch {
    return false;
  }
}

/** Leftovers of runs whose process is gone: containers, networks, volumes, run tags. */
async function removeLeftovers(): Promise<void> {
  const client = await getContainerRuntimeClient();
  const docker = client.container.dockerode;
  const dead = new Set<string>();
  const filters = JSON.stringify({ label: [LABEL_PID] });
  for (const c of await docker.listContainers({ all: true, filters }))
    if (!alive(Number(c.Labels[LABEL_PID]))) dead.add(c.Labels[LABEL_PID]!);
  for (const n of await docker.listNetworks({ filters }))
    if (!alive(Number(n.Labels?.[LABEL_PID]))) dead.add(n.Labels![LABEL_PID]!);
  for (const v of (await docker.listVolumes({ filters })).Volumes ?? [])
    if (!alive(Number(v.Labels?.[LABEL_PID]))) dead.add(v.Labels![LABEL_PID]!);
  for (const pid of dead) {
    const removed = await removeLabelled(LABEL_PID, pid);
    if (removed.length)
      console.info(`container suite: removed leftovers of run ${pid}: ${removed.join(', ')}`);
  }
  // Compose projects of the smoke test (`gwtest-<pid>-...`) whose run is gone.
  const composeFilter = JSON.stringify({ label: ['com.docker.compose.project'] });
  const projects = new Set<string>();
  for (const c of await docker.listContainers({ all: true, filters: composeFilter })) {
    const project = c.Labels['com.docker.compose.project'] ?? '';
    const pid = /^gwtest-(\d+)-/.exec(project)?.[1];
    if (pid && !alive(Number(pid))) projects.add(project);
  }
  for (const project of projects) {
    const removed = await removeLabelled('com.docker.compose.project', project);
    console.info(
      `container suite: removed leftovers of compose project ${project}: ${removed.join(', ')}`,
    );
  }
  // Image tags of dead runs (`...:run-<pid>-<time>`).
  for (const line of (await podman('images', '--format', '{{.Repository}}:{{.Tag}}')).split('\n')) {
    const pid = /:run-(\d+)-/.exec(line)?.[1];
    if (pid && !alive(Number(pid))) await untag(line);
  }
  await stopOrphanDns();
}

/** Removes one tag; the image itself goes too when that was its last tag and nothing uses it. */
async function untag(reference: string): Promise<void> {
  const id = (
    await podman('image', 'inspect', '--format', '{{.Id}}', reference).catch(() => '')
  ).trim();
  if (!id) return;
  await podman('untag', id, reference).catch(() => '');
  const tags = (
    await podman('image', 'inspect', '--format', '{{len .RepoTags}}', id).catch(() => '1')
  ).trim();
  if (tags === '0') await podman('rmi', id).catch(() => '');
}

async function buildImages(): Promise<Record<string, string>> {
  if (process.getuid?.() !== 0) {
    throw new Error(
      'container suite: building the images from this tree needs root (docker/build-airgapped-images.sh ' +
        `uses mmdebstrap and podman's storage); run npm test as root, or ${SETUP}`,
    );
  }
  const hasPodman = await run('podman', ['--version']).then(
    () => true,
    () => false,
  );
  if (!hasPodman) throw new Error(`container suite: podman is not installed; ${SETUP}`);

  const t0 = performance.now();
  const out = await runLogged('bash', ['docker/build-airgapped-images.sh'], process.env);
  const exports = Object.fromEntries(
    [...out.matchAll(/^export (GW_[A-Z_]+)=(\S+)$/gm)].map((m) => [m[1]!, m[2]!]),
  );
  const summary = out
    .split('\n')
    .filter((l) => /^\[airgapped\] {3}\S/.test(l))
    .map((l) => l.replace('[airgapped]   ', '  '));
  console.info(
    `container suite: images built from the work tree in ${((performance.now() - t0) / 1000).toFixed(1)} s\n${summary.join('\n')}`,
  );

  const t1 = performance.now();
  const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as {
    packages: Record<string, { version: string }>;
  };
  const providerVersion = lock.packages['node_modules/oidc-provider']?.version;
  if (!providerVersion)
    throw new Error('container suite: oidc-provider is not in package-lock.json');
  await runLogged(
    'podman',
    [
      'build',
      '--format',
      'docker',
      '--pull=never',
      '--layers',
      '--build-arg',
      `NODE_IMAGE=${exports.GW_NODE_IMAGE ?? 'localhost/gw-base-node:24'}`,
      '--build-arg',
      `OIDC_PROVIDER_VERSION=${providerVersion}`,
      '-t',
      `${OIDC_PROVIDER_REPO}:latest`,
      'test/containers/oidc-provider',
    ],
    process.env,
  );
  console.info(
    `container suite: ${OIDC_PROVIDER_REPO} (oidc-provider ${providerVersion}) in ${((performance.now() - t1) / 1000).toFixed(1)} s`,
  );
  return {
    GW_PROXY_IMAGE: exports.GW_PROXY_IMAGE ?? 'localhost/gw-proxy:latest',
    GW_GATEWAY_IMAGE: exports.GW_GATEWAY_IMAGE ?? 'localhost/gw-gateway:latest',
    GW_APP_IMAGE: exports.GW_APP_IMAGE ?? 'localhost/gw-app:latest',
    GW_POSTGRES_IMAGE: exports.GW_POSTGRES_IMAGE ?? 'localhost/gw-base-postgres:15',
    GW_BALANCER_IMAGE: exports.GW_BALANCER_IMAGE ?? 'localhost/gw-balancer:latest',
    GW_BALANCER_BASE_IMAGE: exports.GW_BALANCER_BASE_IMAGE ?? 'localhost/gw-base-haproxy:2.6',
    GW_REDIS_IMAGE: exports.GW_REDIS_IMAGE ?? 'localhost/gw-base-redis:7',
    GW_TEST_OIDC_PROVIDER_IMAGE: `${OIDC_PROVIDER_REPO}:latest`,
  };
}

export default async function setup(): Promise<() => Promise<void>> {
  await pointAtEngine();
  const runId = `${process.pid}-${Date.now().toString(36)}`;
  process.env.GW_TEST_RUN = runId;
  process.env.GW_TEST_PID = String(process.pid);
  await removeLeftovers();

  const built = await buildImages();
  const tags: string[] = [];
  for (const [variable, image] of Object.entries(built)) {
    const tagged = `${image.replace(/:[^:/]+$/, '')}:run-${runId}`;
    await podman('tag', image, tagged);
    tags.push(tagged);
    process.env[variable] = tagged;
  }

  return async () => {
    const removed = await removeLabelled(LABEL_RUN, runId);
    if (removed.length)
      console.info(`container suite: removed what tests left: ${removed.join(', ')}`);
    for (const tag of tags) await untag(tag);
  };
}
