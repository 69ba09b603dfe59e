import { chown, mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Wait } from 'testcontainers';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { freePort } from '../../native/ports.js';
import {
  containerHealthcheck,
  containerLogs,
  IMAGES,
  TestContainer,
  testLabels,
} from '../support/container-engine.js';
import { type ContainerStack, startContainerStack } from '../support/container-stack.js';
import { http } from '../support/http.js';
import { apk } from '../support/sidecar.js';

/**
 * What the images promise beyond the black-box suite (test/containers/gateway.test.ts):
 * unprivileged processes, nginx's credential cache in memory, a proxy health check that sends
 * no request, and a mounted configuration folder that stays its owner's.
 */

let stack: ContainerStack;

beforeAll(async () => {
  stack = await startContainerStack();
  console.info(`containers: four images healthy in ${Math.round(stack.lastStartMs)} ms`);
}, 240_000);

afterAll(async () => {
  await stack?.close();
}, 120_000);

const call = async (path: string, headers: Record<string, string> = {}, method = 'GET') =>
  http(`${stack.baseUrl}${path}`, {
    method,
    headers,
    tls: { ...(await stack.tls()) },
    connectTo: '127.0.0.1',
  });

/** Runs a shell command in a service's container; fails the test unless it exits 0. */
async function sh(service: 'proxy' | 'gateway' | 'app', script: string): Promise<string> {
  const result = await stack.container(service).exec(['sh', '-c', script]);
  expect(result.exitCode, result.output).toBe(0);
  return result.output.trim();
}

describe('the images, wired as in docker-compose.yml', () => {
  test('the sidecar and the engine run as node (1000); nginx workers as www-data', async () => {
    expect(await sh('gateway', 'id -u')).toBe('1000');
    expect(await sh('app', 'id -u')).toBe('1000');
    // No ps in these images: the owners of the nginx worker processes, from /proc.
    const workers = await sh(
      'proxy',
      'for p in /proc/[0-9]*; do [ "$(head -c 13 "$p/cmdline")" = "nginx: worker" ] && stat -c %U "$p"; done; true',
    );
    const users = workers.split('\n').filter(Boolean);
    expect(users.length).toBeGreaterThan(0);
    expect(new Set(users)).toEqual(new Set(['www-data']));
  });

  test("decisions live in nginx's shared memory only; the control socket is shared with the gateway alone", async () => {
    const res = await call('/api', apk(stack.adminKey));
    expect(res.status).toBe(200);
    // No cache directory: nothing nginx keeps about a caller is written to a file.
    expect(await sh('proxy', 'ls /var/cache/gateway-auth 2>/dev/null | wc -l')).toBe('0');
    // nginx binds the socket 0666 in the volume both containers mount; the gateway (user node)
    // reaches it, the published port never does (its /invalidate is an ordinary path).
    expect(await sh('proxy', 'stat -c %a /run/gateway-control/nginx.sock')).toBe('666');
    expect(await sh('gateway', 'test -S /run/gateway-control/nginx.sock && echo socket')).toBe(
      'socket',
    );
    expect(await stack.logs('gateway')).toMatch(/listening for API client changes/);
    // Through the public port /invalidate-all is an ordinary path: authenticated, then the app's.
    expect((await call('/invalidate-all', {}, 'POST')).status).toBe(401);
  });

  test("the proxy's health check sends no request (nothing reaches the sidecar) and passes without it", async () => {
    const check = await containerHealthcheck(stack.container('proxy').getId());
    expect(check[0]).toBe('CMD-SHELL');
    const runCheck = async () => {
      const result = await stack.container('proxy').exec(['sh', '-c', check[1]!]);
      expect(result.exitCode, result.output).toBe(0);
    };
    const accessLines = async () =>
      (await stack.logs('proxy'))
        .split('\n')
        .filter((l) => /"[A-Z]+ \S+ HTTP\/[\d.]+" \d{3}/.test(l));
    // A request of our own, waited for in the log: once its line is there, every line an
    // earlier request caused is there too (the container's log reaches us with a delay).
    const logged = async (marker: string) => {
      expect((await call(marker)).status).toBe(401);
      let lines = await accessLines();
      for (let i = 0; i < 100 && !lines.some((l) => l.includes(marker)); i += 1) {
        await new Promise((r) => setTimeout(r, 50));
        lines = await accessLines();
      }
      return lines;
    };
    const start = `/health-marker-before-${Date.now()}`;
    const before = (await logged(start)).findIndex((l) => l.includes(start)) + 1;
    expect(before).toBeGreaterThan(0);
    for (let i = 0; i < 3; i += 1) await runCheck();
    const marker = `/health-marker-after-${Date.now()}`;
    const lines = await logged(marker);
    expect(lines.slice(before)).toEqual([expect.stringContaining(`GET ${marker} `)]);

    await stack.stopService('gateway');
    await runCheck();
  });
});

describe('a configuration folder mounted from the host', () => {
  let dir: string;
  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  test("what the proxy creates there on first start belongs to the folder's owner", async () => {
    dir = await mkdtemp(join(tmpdir(), 'gw-config-owner-'));
    await chown(dir, 4242, 4343);
    const proxy = await new TestContainer(IMAGES.proxy)
      .withLabels(testLabels({ 'gw.test.service': 'proxy-alone' }))
      .withEnvironment({
        GATEWAY_FQDN: 'owner.e2e.test',
        GATEWAY_APP_UPSTREAM: '127.0.0.1:9',
        GATEWAY_SIDECAR_UPSTREAM: '127.0.0.1:9',
      })
      .withBindMounts([{ source: dir, target: '/etc/config' }])
      // Published because the image EXPOSEs it (podman reports an unpublished one as unbound).
      .withLoopbackPort(443, await freePort())
      .withStartupTimeout(60_000)
      .withWaitStrategy(Wait.forHealthCheck())
      .start();
    try {
      const owners: string[] = [];
      const walk = async (path: string): Promise<void> => {
        const info = await stat(path);
        owners.push(`${path.slice(dir.length) || '/'} ${info.uid}:${info.gid}`);
        if (info.isDirectory())
          for (const entry of (await readdir(path)).sort()) await walk(join(path, entry));
      };
      await walk(dir);
      expect(owners).toEqual([
        '/ 4242:4343',
        '/nginx 4242:4343',
        '/nginx/conf.d 4242:4343',
        '/nginx/conf.d/default.conf 4242:4343',
        '/nginx/conf.d/sidecar-proof.key 4242:4343',
        '/nginx/ssl 4242:4343',
        '/nginx/ssl/nginx.crt 4242:4343',
        '/nginx/ssl/nginx.key 4242:4343',
        '/nginx/ssl/ssl.conf 4242:4343',
      ]);
    } finally {
      const log = await containerLogs(proxy.getId()).catch(() => '');
      await proxy.stop({ timeout: 5_000 });
      expect(log).toMatch(/wrote nginx\/ssl\/nginx.key/);
    }
  });
});
