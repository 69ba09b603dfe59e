import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { http } from '../support/http.js';
import {
  launchNativeGateway,
  type NativeGatewayProcess,
  type NativeRole,
} from '../support/native-gateway.js';

// The native run supervises its children (issue 13): each one killed in turn is restarted,
// the gateway serves again without anyone restarting it, and the runner's output says what
// happened; a child that fails at every start ends the run with a non-zero exit and why.

const CLIENTS = '/v1/management/api-clients/';
let home: string;
let gateway: NativeGatewayProcess;

beforeAll(async () => {
  home = await mkdtemp(join(tmpdir(), 'gw-sup-'));
  gateway = await launchNativeGateway({ home, env: { API_KEY_CREATE: 'true' } });
});

afterAll(async () => {
  await gateway?.stop();
  await rm(home, { recursive: true, force: true });
});

/** GET through nginx with the admin key: 200 needs nginx, the sidecar and PostgreSQL. */
async function get(path: string) {
  return await http(`${gateway.loopbackUrl}${path}`, {
    headers: { Host: 'localhost', Authorization: `apk ${gateway.adminKey}` },
    tls: { ca: gateway.ca, servername: 'localhost' },
    timeoutMs: 5_000,
  }).catch((err: Error) => ({ status: 0, text: err.message, json: undefined }));
}

async function until(what: string, check: () => Promise<boolean>, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out: ${what}\n${gateway.output()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('the native run restarts a child that dies', () => {
  for (const role of ['sidecar', 'app', 'postgres', 'nginx'] as NativeRole[]) {
    test(`${role}: killed, restarted, serving again, logged`, async () => {
      expect((await get(CLIENTS)).status).toBe(200);
      const pid = (await gateway.pid(role))!;
      expect(pid).toBeGreaterThan(0);
      process.kill(pid, 'SIGKILL');
      await until(`${role} restarted`, async () => {
        const now = await gateway.pid(role);
        return now !== undefined && now !== pid;
      });
      // Management needs the sidecar and the database; /api reaches the engine.
      await until('the gateway serves again', async () => {
        const [management, app] = await Promise.all([get(CLIENTS), get('/api')]);
        return management.status === 200 && app.status === 200;
      });
      const output = gateway.output();
      expect(output).toContain(`${role} died (killed by SIGKILL); restarting in`);
      expect(output).toMatch(new RegExp(`${role} is back \\(pid ${await gateway.pid(role)}\\)`));
      // A restart is not a new start: no second bootstrap key.
      expect(output.match(/NEWLY GENERATED API KEY/g)).toHaveLength(1);
    }, 60_000);
  }

  test('while the sidecar is down, callers get 503 JSON (fail closed)', async () => {
    const down = join(home, 'run', 'sidecar.down');
    await writeFile(down, ''); // held down, so that the 503 can be observed
    process.kill((await gateway.pid('sidecar'))!, 'SIGKILL');
    await until('held down', async () => gateway.output().includes('sidecar stopped'));
    const res = await get(CLIENTS);
    expect(res.status).toBe(503);
    expect(res.json).toEqual({ errors: [expect.objectContaining({ code: expect.any(String) })] });
    await rm(down);
    await until('back', async () => (await get(CLIENTS)).status === 200);
  }, 60_000);

  test('a child that fails at every start ends the run with a non-zero exit and the reason', async () => {
    // An operator's edit that nginx refuses: every start of nginx from now on fails.
    const conf = join(home, 'config/nginx/conf.d/default.conf');
    await writeFile(conf, `${await readFile(conf, 'utf8')}\nthis_is_not_a_directive;\n`);
    process.kill((await gateway.pid('nginx'))!, 'SIGKILL');
    const code = await new Promise<number | null>((resolve) =>
      gateway.runner.child.once('exit', (c) => resolve(c)),
    );
    expect(code).toBe(1);
    const output = gateway.output();
    expect(output).toMatch(
      /nginx failed to start 5 times within 60 s \(last: exit code 1\); giving up/,
    );
    expect(output).toContain('gateway: stopping: nginx failed to start 5 times');
    // Everything it started is gone.
    for (const role of ['sidecar', 'app', 'postgres'] as const) {
      expect(await gateway.pid(role), role).toBeUndefined();
    }
  }, 90_000);
});
