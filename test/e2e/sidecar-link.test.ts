import { randomBytes } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { connect } from 'node:tls';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { freshDatabase } from '../support/database.js';
import { keyTableLoaded, metricsText } from '../support/key-table.js';
import { CLIENTS, createClient, uniqueName } from '../support/management.js';
import { sample } from '../support/metrics-text.js';
import { startNativeStack } from '../support/native-stack.js';
import { apk } from '../support/sidecar.js';
import { callStack } from '../support/stack-http.js';

// Each nginx worker asks the sidecar over one shared connection (lua/gateway/sidecar/mux.lua,
// docs/decisions/20261127-shared-sidecar-connection.md): questions that wait together go out
// in one write and the answers come back in order. With the decision cache off every request
// asks, so a burst of mixed credentials shows whether each answer reaches its own request.

type NativeStack = Awaited<ReturnType<typeof startNativeStack>>;
let stack: NativeStack;
let user: { id: number; token: string };
let databaseUrl: string;

beforeAll(async () => {
  const settings = join(tmpdir(), `gw-link-${randomBytes(4).toString('hex')}.yaml`);
  await writeFile(settings, 'auth_cache:\n  max_age_ms: 0\n');
  databaseUrl = await freshDatabase();
  stack = await startNativeStack({
    env: { DATABASE_URL: databaseUrl, GATEWAY_SETTINGS: settings },
  });
  user = await createClient(
    stack.baseUrl,
    stack.adminKey,
    { name: uniqueName('link'), is_admin: false, generate_api_key: true },
    { ...(await stack.tls()), connectTo: '127.0.0.1' },
  );
}, 240_000);
afterAll(() => stack?.close());

const call = (key: string | null, path: string) =>
  callStack(stack, path, { headers: key === null ? {} : apk(key), timeoutMs: 10_000 });

/** Auth frame connections the sidecar has accepted so far (its own metric). */
async function frameConnections(): Promise<number> {
  const res = await fetch(`${stack.gateway().metricsUrl}/metrics`);
  const line = (await res.text())
    .split('\n')
    .find((l) => l.startsWith('gateway_auth_frame_connections_total '));
  return Number(line?.split(' ')[1] ?? Number.NaN);
}

// While the key table's replica is trusted, an API key question is answered from the rows the
// sidecar holds beside it, not from PostgreSQL
// (docs/decisions/20261202-api-key-clients-from-the-replica.md); a change is seen on the next
// request all the same. Asserted: the answers, and the auth pool's query count.
describe('API key questions answered from the replica the sidecar holds', () => {
  /** Queries the sidecar's auth pool ran (the /auth look-ups; also its readiness checks). */
  const authQueries = async () =>
    sample(
      await metricsText(stack.gateway().metricsUrl),
      'gateway_db_query_duration_seconds_count{pool="auth"}',
    );
  const client = async (name: string) =>
    createClient(
      stack.baseUrl,
      stack.adminKey,
      { name: uniqueName(name), is_admin: false, generate_api_key: true },
      { ...(await stack.tls()), connectTo: '127.0.0.1' },
    );
  beforeAll(() => keyTableLoaded(stack.gateway().metricsUrl));

  test("management's admin checks (asked of the sidecar every time) ask PostgreSQL nothing", async () => {
    expect((await call(stack.adminKey, `${CLIENTS}?limit=1`)).status).toBe(200);
    const before = await authQueries();
    for (let i = 0; i < 20; i += 1) {
      expect((await call(stack.adminKey, `${CLIENTS}?limit=1`)).status).toBe(200);
    }
    // At most one stray readiness check; before, each admin check was a query of its own.
    expect((await authQueries()) - before).toBeLessThanOrEqual(1);
  }, 60_000);

  test('changed through the API: the next request gets the new answer', async () => {
    const doomed = await client('doomed');
    expect((await call(doomed.token, '/api')).status).toBe(200);
    const gone = await callStack(stack, `${CLIENTS}/${doomed.id}`, {
      method: 'DELETE',
      headers: apk(stack.adminKey),
    });
    expect(gone.status, gone.text).toBe(200);
    const refused = await call(doomed.token, '/api');
    expect(refused.status).toBe(401);
    expect((refused.json as { errors: { code: string }[] }).errors[0]!.code).toBe(
      'INVALID_API_KEY',
    );

    const narrowed = await client('narrowed');
    expect((await call(narrowed.token, '/api')).status).toBe(200);
    const put = await callStack(stack, `${CLIENTS}/${narrowed.id}`, {
      method: 'PUT',
      headers: apk(stack.adminKey),
      json: { permissions: [{ methods: ['GET'], path: '/elsewhere/**' }] },
    });
    expect(put.status, put.text).toBe(200);
    expect((await call(narrowed.token, '/api')).status).toBe(403);
  }, 60_000);

  test('changed in PostgreSQL behind the API (the change feed): the next request after its notice', async () => {
    const changed = await client('behind');
    expect((await call(changed.token, '/api')).status).toBe(200);
    const db = new pg.Client({ connectionString: databaseUrl });
    await db.connect();
    try {
      await db.query('DELETE FROM api_clients WHERE id = $1', [changed.id]);
    } finally {
      await db.end();
    }
    // The notice reaches this pair's sidecar through NOTIFY: a few milliseconds.
    const deadline = Date.now() + 5_000;
    let status = 0;
    while (Date.now() < deadline) {
      status = (await call(changed.token, '/api')).status;
      if (status === 401) break;
      await sleep(20);
    }
    expect(status).toBe(401);
  }, 60_000);
});

describe('one connection per worker to the sidecar, shared by its requests', () => {
  test('the cache is off: this gateway asks the sidecar on every request', async () => {
    const conf = await readFile(join(stack.configDir, 'nginx/conf.d/default.conf'), 'utf8');
    expect(conf).toMatch(/set \$auth_cache_max_age_ms 0;/);
  });

  test('a burst of mixed credentials: every request gets its own answer', async () => {
    const wrong = `${user.id}.${randomBytes(32).toString('base64url')}`;
    const unknown = `${user.id + 100_000}.${randomBytes(32).toString('base64url')}`;
    // Who may do what differs by credential, so an answer given to the wrong request shows.
    // Wrong and unknown secrets spend failure budgets (20 per key id, 200 per address): a few.
    const kinds = [
      { key: stack.adminKey, path: CLIENTS, status: 200, code: null },
      { key: user.token, path: CLIENTS, status: 403, code: 'FORBIDDEN' },
      { key: user.token, path: '/api', status: 200, code: null },
    ];
    const refused = [
      { key: wrong, path: '/api', status: 401, code: 'INVALID_API_KEY' },
      { key: unknown, path: '/api', status: 401, code: 'INVALID_API_KEY' },
    ];
    const plan = Array.from({ length: 400 }, (_, i) =>
      i % 40 === 13 ? refused[((i / 40) % 2) | 0]! : kinds[(i * 7) % kinds.length]!,
    );
    const answers = await Promise.all(plan.map((k) => call(k.key, k.path)));
    const mismatched = answers
      .map((res, i) => ({ res, want: plan[i]! }))
      .filter(({ res, want }) => {
        if (res.status !== want.status) return true;
        const code = (res.json as { errors?: { code: string }[] } | undefined)?.errors?.[0]?.code;
        return want.code !== null && code !== want.code;
      })
      .map(
        ({ res, want }) =>
          `${want.path} wanted ${want.status} ${want.code}, got ${res.status} ${res.text.slice(0, 120)}`,
      );
    expect(mismatched).toEqual([]);
  }, 60_000);

  test('a burst opens at most one connection per worker, and the next burst none', async () => {
    const conf = await readFile(join(stack.home, 'run', 'nginx', 'nginx.conf'), 'utf8');
    // `auto` is one worker per CPU, as nginx counts them.
    const setting = /worker_processes\s+(\w+)/.exec(conf)?.[1];
    const workers = setting === 'auto' ? availableParallelism() : Number(setting);
    expect(workers).toBeGreaterThanOrEqual(1);
    const before = await frameConnections();
    await Promise.all(Array.from({ length: 200 }, () => call(user.token, '/api')));
    const afterFirst = await frameConnections();
    // A link per worker (none if the burst before left them open); before the link, each
    // request in flight took a connection of its own: dozens.
    expect(afterFirst - before).toBeLessThanOrEqual(workers);
    await Promise.all(Array.from({ length: 200 }, () => call(user.token, '/api')));
    expect(await frameConnections()).toBe(afterFirst);
  }, 60_000);

  test('the sidecar killed under load: 503 in the one shape, never a hang; back, and passing again', async () => {
    const sidecar = await stack.gateway().pid('sidecar');
    expect(sidecar).toBeDefined();
    const burst = Promise.all(Array.from({ length: 200 }, () => call(user.token, '/api')));
    process.kill(sidecar!, 'SIGKILL');
    const answers = await burst;
    for (const res of answers) {
      expect([200, 503]).toContain(res.status);
      if (res.status === 503) {
        expect(res.json).toEqual({
          errors: [expect.objectContaining({ code: expect.any(String) })],
        });
      }
    }
    // The runner starts the sidecar again; the workers' links are made anew on the next question.
    const deadline = Date.now() + 30_000;
    let last = 0;
    while (Date.now() < deadline) {
      last = (await call(user.token, '/api')).status;
      if (last === 200) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(last).toBe(200);
    const again = await Promise.all(Array.from({ length: 50 }, () => call(user.token, '/api')));
    expect(again.map((r) => r.status)).toEqual(again.map(() => 200));
  }, 60_000);

  test("the sidecar killed between a management request's check and its proxying: 503 in the one shape, not 502", async () => {
    // The admin check runs before nginx reads the body and only then connects to the sidecar:
    // half a body, the check passes, the sidecar dies, the rest of the body (the runner starts
    // it again after 250 ms, long after nginx has tried).
    const tls = await stack.tls();
    const body = JSON.stringify({ name: uniqueName('gone'), is_admin: false });
    const head =
      `POST ${CLIENTS} HTTP/1.1\r\nHost: ${stack.fqdn}\r\nAuthorization: apk ${stack.adminKey}\r\n` +
      `Content-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n`;
    const socket = connect({
      host: '127.0.0.1',
      port: Number(new URL(stack.baseUrl).port),
      ca: tls.ca,
      servername: tls.servername,
    });
    const received: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => received.push(chunk));
    const closed = new Promise<void>((resolve, reject) => {
      socket.on('close', () => resolve());
      socket.on('error', reject);
    });
    await new Promise<void>((resolve) => socket.once('secureConnect', () => resolve()));
    socket.write(head + body.slice(0, 5));
    await sleep(1_000);
    const sidecar = await stack.gateway().pid('sidecar');
    process.kill(sidecar!, 'SIGKILL');
    await sleep(30);
    // write, not end: a TLS close_notify sent after the body can still be unread when nginx
    // closes after its answer, and the kernel then resets the connection (ECONNRESET here).
    // nginx closes it anyway (Connection: close).
    socket.write(body.slice(5));
    await closed;
    const answer = Buffer.concat(received).toString('utf8');
    expect(answer.split('\r\n')[0]).toMatch(/^HTTP\/1.1 503 /);
    expect(answer).toMatch(/\r\ncontent-type: application\/json/i);
    expect(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4))).toEqual({
      errors: [expect.objectContaining({ code: 'AUTH_UNAVAILABLE' })],
    });
    // The client was never made: nobody answered it.
    const deadline = Date.now() + 30_000;
    let listed: { items?: Array<{ name: string }> } = {};
    while (Date.now() < deadline) {
      const res = await call(stack.adminKey, `${CLIENTS}?limit=1000`);
      if (res.status === 200) {
        listed = res.json as typeof listed;
        break;
      }
      await sleep(200);
    }
    expect(listed.items?.map((c) => c.name)).not.toContain(JSON.parse(body).name);
  }, 60_000);
});
