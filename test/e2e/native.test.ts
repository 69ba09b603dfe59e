import { X509Certificate } from 'node:crypto';
import {
  chmod,
  lstat,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  readlink,
  rm,
  stat,
  writeFile,
} from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { locateNginx } from '../../native/nginx.js';
import { gatewaySuite } from '../support/gateway-suite.js';
import { http } from '../support/http.js';
import { startNativeStack } from '../support/native-stack.js';

describe('native gateway (npm start)', () => {
  gatewaySuite(() => startNativeStack({ fqdn: 'gateway.e2e.test' }));
});

describe('native gateway homes', () => {
  test('two fresh homes get different certificates; a second start of one home keeps its own', async () => {
    const fingerprint = async (home: string) =>
      new X509Certificate(await readFile(join(home, 'config/nginx/ssl/nginx.crt'))).fingerprint256;
    const a = await startNativeStack();
    const b = await startNativeStack();
    const [fa, fb] = [await fingerprint(a.home), await fingerprint(b.home)];
    await b.close();
    expect(fa).not.toBe(fb);
    await a.restart();
    expect(await fingerprint(a.home)).toBe(fa);
    await a.close();
  }, 180_000);

  test('a home inside an owner-only directory still starts (as root: data kept outside, linked)', async () => {
    const outer = await mkdtemp(join(tmpdir(), 'gw-private-'));
    await chmod(outer, 0o700);
    const home = join(outer, 'home');
    await mkdir(home);
    const stack = await startNativeStack({ home });
    try {
      const data = join(home, 'postgres');
      if (process.getuid?.() === 0) {
        expect((await lstat(data)).isSymbolicLink()).toBe(true);
        expect(await readlink(data)).toMatch(/^\/var\/lib\/gateway-native\//);
      } else {
        expect((await lstat(data)).isDirectory()).toBe(true);
      }
      await stack.restart();
      expect(
        (
          await http(`${stack.baseUrl}/v1/management/api-clients`, {
            headers: { Authorization: `apk ${stack.adminKey}` },
            tls: { ...(await stack.tls()) },
            connectTo: '127.0.0.1',
          })
        ).status,
      ).toBe(200);
    } finally {
      await stack.close();
      const target = await readlink(join(home, 'postgres')).catch(() => null);
      if (target) await rm(target, { recursive: true, force: true });
      await rm(outer, { recursive: true, force: true });
    }
  }, 120_000);

  const mode = async (path: string) => (await stat(path)).mode & 0o777;
  const LOGS = [
    'app.log',
    'nginx-access.log',
    'nginx-error.log',
    'nginx.log',
    'postgres.log',
    'sidecar.log',
  ];

  test("logs are the owner's alone (the bootstrap key is in one): folder 0700, files 0600", async () => {
    const stack = await startNativeStack();
    try {
      const res = await http(`${stack.baseUrl}/api`, {
        tls: { ...(await stack.tls()) },
        connectTo: '127.0.0.1',
      });
      expect(res.status).toBe(401);
      const logs = join(stack.home, 'logs');
      expect(await mode(logs)).toBe(0o700);
      const files = await readdir(logs);
      expect(files).toEqual(expect.arrayContaining(LOGS));
      for (const file of files) expect(await mode(join(logs, file)), file).toBe(0o600);
      expect(await readFile(join(logs, 'sidecar.log'), 'utf8')).toContain(
        'NEWLY GENERATED API KEY',
      );
      // A worker (www-data, as root) still logs the request through the master's descriptor.
      await expect
        .poll(() => readFile(join(logs, 'nginx-access.log'), 'utf8'))
        .toContain(String(res.headers['x-request-id']));
    } finally {
      await stack.close();
    }
  }, 120_000);

  test('a log past GATEWAY_LOG_MAX_MB is rotated, and nginx goes on writing the emptied file', async () => {
    const stack = await startNativeStack({ env: { GATEWAY_LOG_MAX_MB: '0.001' } });
    try {
      const logs = join(stack.home, 'logs');
      const ask = async () =>
        (
          await http(`${stack.baseUrl}/api`, {
            tls: { ...(await stack.tls()) },
            connectTo: '127.0.0.1',
          })
        ).headers['x-request-id'];
      // About 200 bytes a line: past 1,024 bytes after a few requests.
      for (let i = 0; i < 10; i += 1) await ask();
      await expect
        .poll(() => readdir(logs), { timeout: 30_000, interval: 500 })
        .toContain('nginx-access.log.1');
      // The workers write through the master's descriptor, which still names the live file.
      const after = String(await ask());
      await expect.poll(() => readFile(join(logs, 'nginx-access.log'), 'utf8')).toContain(after);
      for (const file of await readdir(logs)) {
        expect(await mode(join(logs, file)), file).toBe(0o600);
      }
    } finally {
      await stack.close();
    }
  }, 120_000);

  test('the logs of a home from an earlier version are tightened at start', async () => {
    const home = await mkdtemp(join(tmpdir(), 'gw-e2e-'));
    const logs = join(home, 'logs');
    await mkdir(logs);
    await chmod(logs, 0o755);
    for (const file of ['sidecar.log', 'nginx-error.log']) {
      await writeFile(join(logs, file), 'NEWLY GENERATED API KEY: an old one\n');
      await chmod(join(logs, file), 0o644);
    }
    const stack = await startNativeStack({ home });
    try {
      expect(await mode(logs)).toBe(0o700);
      for (const file of await readdir(logs))
        expect(await mode(join(logs, file)), file).toBe(0o600);
      expect(await readFile(join(logs, 'sidecar.log'), 'utf8')).toContain('an old one');
    } finally {
      await stack.close();
      await rm(home, { recursive: true, force: true });
    }
  }, 120_000);

  test('without nginx the run command names the package to install', () => {
    expect(() => locateNginx({ PATH: '/nonexistent' }, [])).toThrow(
      /nginx is not installed.*apt-get install nginx-light/,
    );
  });
});
