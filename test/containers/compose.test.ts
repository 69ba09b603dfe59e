import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { freePort } from '../../native/ports.js';
import { engine, IMAGES, removeLabelled, uniqueSuffix } from '../support/container-engine.js';
import { addressesOf, reachFrom } from '../support/container-reach.js';
import { http } from '../support/http.js';
import { apk } from '../support/sidecar.js';

/**
 * The repository's docker-compose.yml itself, driven by `docker-compose` (Debian's 1.29 here,
 * against the engine's Docker-compatible socket), with the images under test substituted
 * through its GW_*_IMAGE variables, a project name of its own and a free port on loopback.
 * Spec 5.2's edit (API_KEY_CREATE "true" in the gateway's section) is made on a copy of the
 * file, which runs with the repository as its project directory.
 */

const ROOT = join(import.meta.dirname, '../..');
const COMPOSE = 'docker-compose';
const PROJECT = `gwtest-${process.env.GW_TEST_PID || process.pid}-${uniqueSuffix()}`;
const PROJECT_LABEL = 'com.docker.compose.project';
// A second fresh install, of the `secrets` service only: its generated password is another.
const SECOND = `${PROJECT}-second`;
let scratch: string | undefined;
let composeArgs: string[] = [];
let composeEnv: NodeJS.ProcessEnv = {};

function compose(args: string[], timeoutMs = 240_000): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      COMPOSE,
      [...composeArgs, ...args],
      { cwd: ROOT, env: composeEnv, timeout: timeoutMs, maxBuffer: 32 * 1024 * 1024 },
      (err, stdout, stderr) => {
        if (!err) resolve(stdout);
        else if ((err as NodeJS.ErrnoException).code === 'ENOENT')
          reject(
            new Error(
              `${COMPOSE} is not installed: run \`npm test\` as root (its set-up step installs it: scripts/ensure-system.sh test)`,
            ),
          );
        else
          reject(
            new Error(`${COMPOSE} ${args.join(' ')} failed: ${err.message}\n${stdout}\n${stderr}`),
          );
      },
    );
  });
}

afterAll(async () => {
  // After a failure half-way: what `down -v` would have removed.
  if (composeArgs.length) await compose(['down', '-v', '--timeout', '5']).catch(() => '');
  await removeLabelled(PROJECT_LABEL, PROJECT).catch(() => []);
  await removeLabelled(PROJECT_LABEL, SECOND).catch(() => []);
  if (scratch) await rm(scratch, { recursive: true, force: true });
}, 120_000);

describe('docker-compose.yml', () => {
  test('up: an authenticated 200 with the bootstrap key from the log; down -v leaves nothing', async () => {
    const original = await readFile(join(ROOT, 'docker-compose.yml'), 'utf8');
    // Spec 5.2.1: the gateway's section says API_KEY_CREATE "false"; the operator sets "true".
    expect(original.match(/^ {6}API_KEY_CREATE: "false"$/gm)).toHaveLength(1);
    scratch = await mkdtemp(join(tmpdir(), 'gw-compose-'));
    const file = join(scratch, 'docker-compose.yml');
    await writeFile(file, original.replace('API_KEY_CREATE: "false"', 'API_KEY_CREATE: "true"'));
    const port = await freePort();
    const {
      GATEWAY_CONFIG: _config,
      GATEWAY_FQDN: _fqdn,
      POSTGRES_PASSWORD: _password,
      ...inherited
    } = process.env;
    composeEnv = {
      ...inherited,
      COMPOSE_PROJECT_NAME: PROJECT,
      GATEWAY_HTTPS_BIND: '127.0.0.1',
      GATEWAY_HTTPS_PORT: String(port),
      GW_PROXY_IMAGE: IMAGES.proxy,
      GW_GATEWAY_IMAGE: IMAGES.gateway,
      GW_APP_IMAGE: IMAGES.app,
      GW_POSTGRES_IMAGE: IMAGES.database,
    };
    composeArgs = ['-f', file, '--project-directory', ROOT, '--ansi', 'never'];

    const t0 = performance.now();
    await compose(['up', '-d', '--no-build']);
    const upReturned = performance.now() - t0;

    // `up -d` returns once the proxy's container started (after the others were healthy);
    // nginx needs a moment more. Poll until the first authenticated 200 (nothing announces it).
    let key = '';
    let ca = '';
    let status = 0;
    const deadline = Date.now() + 90_000;
    while (status !== 200) {
      if (Date.now() > deadline)
        throw new Error(`no authenticated 200 within 90 s (last: ${status})`);
      key ||=
        /NEWLY GENERATED API KEY: (\S+)/.exec(
          await compose(['logs', '--no-color', 'gateway']),
        )?.[1] ?? '';
      ca ||= await compose(['exec', '-T', 'proxy', 'cat', '/etc/config/nginx/ssl/nginx.crt']).catch(
        () => '',
      );
      if (key && ca) {
        status = await http(`https://localhost:${port}/api`, {
          headers: apk(key),
          tls: { ca, servername: 'localhost' },
          connectTo: '127.0.0.1',
          timeoutMs: 5_000,
        }).then(
          (res) => res.status,
          () => 0,
        );
      }
      if (status !== 200) await new Promise((r) => setTimeout(r, 200));
    }
    const firstOk = performance.now() - t0;
    console.info(
      `compose: up -d returned after ${(upReturned / 1000).toFixed(1)} s; ` +
        `first authenticated 200 ${(firstOk / 1000).toFixed(1)} s after up`,
    );

    const anonymous = await http(`https://localhost:${port}/api`, {
      tls: { ca, servername: 'localhost' },
      connectTo: '127.0.0.1',
    });
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers['x-request-id']).toMatch(/^[0-9a-f]{32}$/);
    // Management is the sidecar's to decide every time: nginx asks it.
    const listed = await http(`https://localhost:${port}/v1/management/api-clients?limit=1`, {
      headers: apk(key),
      tls: { ca, servername: 'localhost' },
      connectTo: '127.0.0.1',
    });
    expect(listed.status).toBe(200);

    // docs/operating.md's look at the metrics, inside the gateway container (published nowhere):
    // ready, and nginx's Lua counters reach the sidecar through the shared control socket.
    const inGateway = (path: string) =>
      compose([
        'exec',
        '-T',
        'gateway',
        'node',
        '-e',
        `fetch('http://127.0.0.1:9464${path}').then(r=>r.text()).then(console.log)`,
      ]);
    expect(JSON.parse(await inGateway('/readyz'))).toEqual({ status: 'ready' });
    const metrics = await inGateway('/metrics');
    expect(metrics).toMatch(/^gateway_nginx_up 1$/m);
    expect(metrics).toMatch(
      /^gateway_auth_decisions_total\{method="apk",result="allowed"\} [1-9]/m,
    );
    // Ready means nginx holds the key table: it decides every API key from it.
    expect(metrics).toMatch(/^gateway_key_table_complete 1$/m);
    expect(metrics).not.toContain(key.split('.')[1]);
    // nginx knows the sidecar by name (gateway:8081) and asked it in one hop, on its own
    // socket (lua/gateway/sidecar/address.lua), not through the control socket.
    expect(metrics).toMatch(/^gateway_auth_frame_connections_total [1-9]/m);

    // The sidecar trusts only nginx (docs/security.md): a question sent to it from anywhere
    // else, naming another OpenID provider in the setting headers nginx would send, is refused
    // before any of them is read. From inside its own container, and from the proxy's (a
    // process beside nginx, on the application's network too: the app itself has no route).
    const forge = async (service: string, url: string) =>
      JSON.parse(
        await compose([
          'exec',
          '-T',
          service,
          'node',
          '-e',
          `fetch('${url}', { headers: {
             authorization: 'Bearer eyJhbGciOiJub25lIn0.eyJzdWIiOiJhZG1pbiJ9.',
             'x-gateway-oidc-enabled': 'true',
             'x-gateway-oidc-discovery': 'http://attacker.example/.well-known/openid-configuration',
             'x-gateway-oidc-ssl-verify': 'no',
             'x-gateway-oidc-accept-none-alg': 'true',
           } }).then(async (r) => console.log(JSON.stringify({ status: r.status, body: await r.json() })))`,
        ]),
      ) as { status: number; body: { errors: { code: string }[] } };
    for (const [service, url] of [
      ['gateway', 'http://127.0.0.1:8081/auth'],
      ['proxy', 'http://gateway:8081/auth'],
    ] as const) {
      const forged = await forge(service, url);
      expect(forged.status, service).toBe(403);
      expect(forged.body.errors[0]!.code, service).toBe('GATEWAY_PROOF_REQUIRED');
    }
    expect(await inGateway('/metrics')).toMatch(
      /^gateway_sidecar_unproven_requests_total\{[^}]*route="auth"[^}]*\} [2-9]/m,
    );

    // Segmented (docs/security.md): the app shares a network with the proxy only. From inside
    // it, neither PostgreSQL nor the sidecar (its port, its metrics) answers, by name or by
    // address; from the proxy, the same probe reaches them (so it can tell).
    const docker = (await engine()).container.dockerode;
    const database = await addressesOf(docker, PROJECT, 'database');
    const gateway = await addressesOf(docker, PROJECT, 'gateway');
    expect(Object.keys(database)).toEqual(['back']);
    expect(Object.keys(gateway)).toEqual(['back']);
    expect(Object.keys(await addressesOf(docker, PROJECT, 'app'))).toEqual(['front']);
    expect(Object.keys(await addressesOf(docker, PROJECT, 'proxy')).sort()).toEqual([
      'back',
      'front',
    ]);
    const targets = [
      ['database', 5432],
      ['gateway', 8081],
      ['gateway', 9464],
      [database.back!, 5432],
      [gateway.back!, 8081],
      [gateway.back!, 9464],
    ] as const;
    const fromApp = await reachFrom((c) => compose(['exec', '-T', 'app', ...c]), targets);
    console.info(`compose: from the app container: ${JSON.stringify(fromApp)}`);
    for (const [target, outcome] of Object.entries(fromApp))
      expect(outcome, target).not.toBe('open');
    // The control: the same probe reaches each of them from where it is needed. The proxy does
    // not need `database` by name (nginx never talks to it): under podman's CNI plugin only its
    // first network's names and its upstreams resolve there (docker/proxy-hosts.mjs), and the
    // order of its networks' DNS servers is podman's. The sidecar does, from `back`.
    const needed = targets.filter(([host]) => host !== 'database');
    const fromProxy = await reachFrom((c) => compose(['exec', '-T', 'proxy', ...c]), needed);
    expect(fromProxy).toEqual(
      Object.fromEntries(needed.map(([host, port]) => [`${host}:${port}`, 'open'])),
    );
    const fromGateway = await reachFrom(
      (c) => compose(['exec', '-T', 'gateway', ...c]),
      [['database', 5432]],
    );
    expect(fromGateway).toEqual({ 'database:5432': 'open' });

    // No default password: generated on this first `up`, random, in the secrets volume only.
    const password = (
      await compose(['exec', '-T', 'gateway', 'cat', '/run/gateway-secrets/postgres-password'])
    ).trim();
    expect(password).toMatch(/^[0-9a-f]{48}$/);
    const rendered = await compose(['config']);
    expect(rendered).not.toContain(password);
    expect(rendered).not.toMatch(/POSTGRES_PASSWORD: ['"]?gateway|:gateway@/);
    // No default but the empty one (the secrets service then generates it).
    expect(original).not.toMatch(/POSTGRES_PASSWORD:-[^}]|:gateway@/);
    // The sidecar's environment holds the file's name, not the password.
    const gatewayEnv = await compose(['exec', '-T', 'gateway', 'env']);
    expect(gatewayEnv).not.toContain(password);
    // Another fresh install gets another one.
    const second = ['-p', SECOND];
    await compose([...second, 'run', '--rm', 'secrets']);
    const other = (
      await compose([
        ...second,
        'run',
        '--rm',
        'secrets',
        'cat',
        '/run/gateway-secrets/postgres-password',
      ])
    ).trim();
    await compose([...second, 'down', '-v']);
    expect(other).toMatch(/^[0-9a-f]{48}$/);
    expect(other).not.toBe(password);

    // Five services: four healthy, the one-shot `secrets` exited 0; only the proxy publishes a
    // port, on the address asked for.
    const filters = JSON.stringify({ label: [`${PROJECT_LABEL}=${PROJECT}`] });
    const services: string[] = [];
    for (const info of await docker.listContainers({ all: true, filters })) {
      const service = info.Labels['com.docker.compose.service']!;
      services.push(service);
      const inspect = await docker.getContainer(info.Id).inspect();
      if (service === 'secrets') expect(inspect.State.ExitCode, service).toBe(0);
      else expect(inspect.State.Health?.Status, service).toBe('healthy');
      const published = Object.values(inspect.HostConfig.PortBindings ?? {})
        .flat()
        .filter((b) => (b as { HostPort?: string } | null)?.HostPort);
      expect(published, service).toEqual(
        service === 'proxy'
          ? [expect.objectContaining({ HostIp: '127.0.0.1', HostPort: String(port) })]
          : [],
      );
    }
    expect(services.sort()).toEqual(['app', 'database', 'gateway', 'proxy', 'secrets']);

    await compose(['down', '-v', '--timeout', '10']);
    composeArgs = [];
    expect(await docker.listContainers({ all: true, filters })).toEqual([]);
    expect(await docker.listNetworks({ filters })).toEqual([]);
    expect((await docker.listVolumes({ filters })).Volumes ?? []).toEqual([]);
  }, 300_000);
});
