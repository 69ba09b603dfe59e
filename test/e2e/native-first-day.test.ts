import { execFile } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { EngineClient } from '../../engine/client/index.js';
import { http } from '../support/http.js';
import { launchNativeGateway, type NativeGatewayProcess } from '../support/native-gateway.js';

// Issue 42: an operator's first day with the native run. A `gateway-config render` over the
// native home neither drops edits silently nor leaves nginx pointed at the containers'
// sockets; readiness is false while nginx cannot reach its sidecar, and `check` says why; the
// bootstrap lock's refusal and the engine's password show on the terminal as documented; and
// the run fronts an application of the operator's own (GATEWAY_APP_UPSTREAM).

const ROOT = join(import.meta.dirname, '..', '..');
const CLIENTS = '/v1/management/api-clients/';
const ENGINE_PASSWORD_LINE = /NEWLY GENERATED ENGINE ADMIN PASSWORD for admin: (\S+)/;

/** `npx gateway-config ...` from the checkout, as the README writes it; exit status and output. */
function gatewayConfig(args: string[]): Promise<{ code: number; out: string; err: string }> {
  return new Promise((resolve) => {
    execFile('npx', ['--no-install', 'gateway-config', ...args], { cwd: ROOT }, (error, out, err) =>
      resolve({ code: error ? Number(error.code ?? 1) : 0, out, err }),
    );
  });
}

/** `npm run reload` for a home, as the README writes it; exit status and output. */
function npmReload(home: string): Promise<{ code: number; out: string; err: string }> {
  return new Promise((resolve) => {
    execFile(
      'npm',
      ['run', 'reload', '--silent'],
      { cwd: ROOT, env: { ...process.env, GATEWAY_HOME: home } },
      (error, out, err) => resolve({ code: error ? Number(error.code ?? 1) : 0, out, err }),
    );
  });
}

async function call(gateway: NativeGatewayProcess, path: string, key: string, method = 'GET') {
  return await http(`${gateway.loopbackUrl}${path}`, {
    method,
    headers: { Host: 'localhost', Authorization: `apk ${key}` },
    tls: { ca: gateway.ca, servername: 'localhost' },
    timeoutMs: 5_000,
  });
}

async function readyz(gateway: NativeGatewayProcess) {
  return await http(`${gateway.metricsUrl}/readyz`, { timeoutMs: 5_000 });
}

/** Polls until `check` holds: nginx applies a reload in its own time, with no event to await. */
async function until(what: string, check: () => Promise<boolean>, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out: ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function engineLogin(gateway: NativeGatewayProcess, key: string, password: string) {
  const client = new EngineClient({
    baseUrl: gateway.loopbackUrl,
    authorization: `apk ${key}`,
    tls: { ca: gateway.ca, servername: 'localhost' },
  });
  await client.open();
  await client.login('admin', password);
}

describe('a native home: render, check, readiness, restart', () => {
  let home: string;
  let gateway: NativeGatewayProcess;
  let adminKey: string;
  let password: string;

  beforeAll(async () => {
    home = await mkdtemp(join(tmpdir(), 'gw-day1-'));
    gateway = await launchNativeGateway({ home, env: { API_KEY_CREATE: 'true' } });
    adminKey = gateway.adminKey;
  }, 180_000);

  afterAll(async () => {
    await gateway?.stop();
    if (home) await rm(home, { recursive: true, force: true });
  });

  test('the engine password is printed at the first start, kept in the home, and works', async () => {
    password = ENGINE_PASSWORD_LINE.exec(gateway.output())?.[1] ?? '';
    expect(password).not.toBe('');
    const file = join(home, 'engine-admin-password');
    expect((await readFile(file, 'utf8')).trim()).toBe(password);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    await engineLogin(gateway, adminKey, password);
  });

  test('render over the home is refused without --force, naming the edit it would drop', async () => {
    const sslConf = join(gateway.configDir, 'nginx/ssl/ssl.conf');
    const defaultConf = join(gateway.configDir, 'nginx/conf.d/default.conf');
    // The operator's edit, then a settings file for something else.
    const edited = (await readFile(sslConf, 'utf8')).replace(
      /^(\s*)ssl_protocols [^;]+;/m,
      '$1ssl_protocols TLSv1.3;',
    );
    await writeFile(sslConf, edited);
    const before = await readFile(defaultConf, 'utf8');
    const settings = join(home, 'my.yaml');
    await writeFile(settings, 'auth_cache:\n  max_age_ms: 5000\n');

    const refused = await gatewayConfig(['render', gateway.configDir, '--settings', settings]);
    expect(refused.code).toBe(1);
    expect(refused.err).toContain('nothing was written');
    expect(refused.err).toContain('- ssl_protocols TLSv1.3;');
    expect(refused.err).toContain('--force');
    expect(await readFile(sslConf, 'utf8')).toBe(edited);
    expect(await readFile(defaultConf, 'utf8')).toBe(before);

    // With --force it replaces them, says what it dropped, and keeps the native run's sockets.
    const forced = await gatewayConfig([
      'render',
      gateway.configDir,
      '--settings',
      settings,
      '--force',
    ]);
    expect(forced.code, forced.err).toBe(0);
    expect(forced.out).toContain('- ssl_protocols TLSv1.3;');
    expect(forced.out).toContain("native home's configuration");
    const after = await readFile(defaultConf, 'utf8');
    expect(after).toContain('set $auth_cache_max_age_ms 5000;');
    expect(after).toContain(`listen ${gateway.port} ssl`); // the home's port, not 443
    expect(after).toContain(`listen "unix:${gateway.proxy.controlSocket}";`);
    expect((await gatewayConfig(['check', gateway.configDir])).code).toBe(0);
  });

  test('nginx unable to reach its sidecar: /readyz 503 and check names the cause', async () => {
    const defaultConf = join(gateway.configDir, 'nginx/conf.d/default.conf');
    const good = await readFile(defaultConf, 'utf8');
    const sidecar = /upstream gateway_sidecar \{\s*server (\S+);/.exec(good)![1]!;
    // As a render for containers would have it: the sidecar at an address where none listens.
    await writeFile(defaultConf, good.replaceAll(sidecar, '127.0.0.1:9'));
    try {
      // `npm run reload` checks first and refuses, naming the cause ...
      const refused = await npmReload(home);
      expect(refused.code).toBe(1);
      expect(refused.err).toContain('nothing reloaded');
      expect(refused.err).toContain('the sidecar (upstream gateway_sidecar) is 127.0.0.1:9');
      // ... while nginx's own reload takes it as it is.
      process.kill((await gateway.pid('nginx'))!, 'SIGHUP');
      await until('readiness turns 503', async () => (await readyz(gateway)).status === 503);
      const answer = await readyz(gateway);
      expect(answer.json).toMatchObject({
        errors: [{ code: 'SIDECAR_UNREACHABLE_FROM_NGINX' }],
      });
      const checked = await gatewayConfig(['check', gateway.configDir]);
      expect(checked.code).toBe(1);
      expect(checked.err).toContain(
        `the sidecar (upstream gateway_sidecar) is 127.0.0.1:9, but the native run's sidecar is at ${sidecar}`,
      );
    } finally {
      await writeFile(defaultConf, good);
    }
    const reloaded = await npmReload(home);
    expect(reloaded.code, reloaded.err).toBe(0);
    expect(reloaded.out).toMatch(/nginx \(pid \d+\) reloads/);
    await until('ready again', async () => (await readyz(gateway)).status === 200);
  });

  test('restart over a container default.conf with the lock on: repaired, refusal and password lines on the terminal', async () => {
    const locked = await http(`${gateway.loopbackUrl}/v1/management/settings`, {
      method: 'PUT',
      headers: { Host: 'localhost', Authorization: `apk ${adminKey}` },
      json: { bootstrap_locked: true },
      tls: { ca: gateway.ca, servername: 'localhost' },
    });
    expect(locked.status).toBe(200);
    expect(await gateway.stop()).toBe(0);

    // The case: default.conf as `render` wrote it before it knew native homes, over
    // the home (its paths the home's, its sockets and upstreams the containers' defaults).
    const elsewhere = await mkdtemp(join(tmpdir(), 'gw-day1-render-'));
    try {
      const settings = join(elsewhere, 'for-home.yaml');
      await writeFile(settings, `config_dir: ${gateway.configDir}\n`);
      expect((await gatewayConfig(['render', elsewhere, '--settings', settings])).code).toBe(0);
      const containerConf = await readFile(join(elsewhere, 'nginx/conf.d/default.conf'), 'utf8');
      const port = /listen (\d+) ssl/.exec(
        await readFile(join(gateway.configDir, 'nginx/conf.d/default.conf'), 'utf8'),
      )![1]!;
      await writeFile(
        join(gateway.configDir, 'nginx/conf.d/default.conf'),
        containerConf.replace(/listen 443 ssl/, `listen ${port} ssl`),
      );
    } finally {
      await rm(elsewhere, { recursive: true, force: true });
    }
    const checked = await gatewayConfig(['check', gateway.configDir]);
    expect(checked.code).toBe(1);
    expect(checked.err).toContain('the sidecar (upstream gateway_sidecar) is 127.0.0.1:8081');
    expect(checked.err).toContain(
      'the control socket (listen unix:) is /run/gateway-control/nginx.sock',
    );

    gateway = await launchNativeGateway({
      home,
      port: gateway.port,
      env: { API_KEY_CREATE: 'true' },
    });
    const output = gateway.output();
    expect(output).toContain('for this native run (other lines kept)');
    expect(output).toContain('upstream gateway_sidecar: 127.0.0.1:8081 → unix:');
    expect(output).toMatch(
      /^NO API KEY GENERATED: API_KEY_CREATE=true ignored: the bootstrap lock/m,
    );
    expect(output).not.toContain('NEWLY GENERATED API KEY');
    expect(output).not.toContain('NEWLY GENERATED ENGINE ADMIN PASSWORD');
    expect(output).toContain('Engine admin admin: the password printed at the first start');
    expect((await readyz(gateway)).json).toMatchObject({ status: 'ready' });
    expect((await call(gateway, CLIENTS, adminKey)).status).toBe(200);
    await engineLogin(gateway, adminKey, password);
  }, 180_000);
});

describe('GATEWAY_APP_UPSTREAM: the native run fronts your application', () => {
  let home: string;
  let gateway: NativeGatewayProcess;
  let app: Server;
  const seen: IncomingHttpHeaders[] = [];

  beforeAll(async () => {
    app = createServer((req, res) => {
      seen.push(req.headers);
      res.end(`hello ${req.headers['x-client-name']} at ${req.url}`);
    }).listen(0, '127.0.0.1');
    await once(app, 'listening');
    home = await mkdtemp(join(tmpdir(), 'gw-own-'));
    gateway = await launchNativeGateway({
      home,
      env: {
        API_KEY_CREATE: 'true',
        GATEWAY_APP_UPSTREAM: `http://127.0.0.1:${(app.address() as AddressInfo).port}`,
      },
    });
  }, 180_000);

  afterAll(async () => {
    await gateway?.stop();
    app?.close();
    if (home) await rm(home, { recursive: true, force: true });
  });

  test('a keyed request reaches it with the identity, an unkeyed one never does', async () => {
    const unkeyed = await http(`${gateway.loopbackUrl}/orders`, {
      headers: { Host: 'localhost' },
      tls: { ca: gateway.ca, servername: 'localhost' },
    });
    expect(unkeyed.status).toBe(401);
    expect(seen).toHaveLength(0);

    const answer = await call(gateway, '/orders?x=1', gateway.adminKey);
    expect(answer.status).toBe(200);
    expect(answer.text).toMatch(/^hello bootstrap-.* at \/orders\?x=1$/);
    expect(seen).toHaveLength(1);
    expect(seen[0]!['x-client-id']).toBe(gateway.adminKey.split('.')[0]);
    expect(seen[0]!.authorization).toBeUndefined();
  });

  test('the bundled engine is not started, and the output says what is fronted', async () => {
    expect(gateway.output()).toMatch(/Application: 127\.0\.0\.1:\d+ \(GATEWAY_APP_UPSTREAM/);
    expect(gateway.output()).not.toContain('ENGINE ADMIN PASSWORD');
    expect(await gateway.pid('app')).toBeUndefined();
  });
});
