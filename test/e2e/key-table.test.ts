import { spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { freshDatabase } from '../support/database.js';
import { apiKeyQuestions, keyTableLoaded, metricsText } from '../support/key-table.js';
import { cutListenConnections } from '../support/listen-connections.js';
import { CLIENTS, createClient, uniqueName } from '../support/management.js';
import { sample } from '../support/metrics-text.js';
import { startNativeStack } from '../support/native-stack.js';
import { exchange } from '../support/raw-tls.js';
import { sharedMemory } from '../support/shared-memory.js';
import { apk } from '../support/sidecar.js';
import type { Stack } from '../support/stack.js';
import { callStack } from '../support/stack-http.js';

const PROMTOOL = existsSync('build/tools/promtool') ? 'build/tools/promtool' : 'promtool';

// nginx holds the key table (docs/decisions/20261127-key-table-replica.md): loaded when a pair
// starts, kept current by the change feed, caught up from its position after the feed was
// cut, trusted while the database is away, and there again after a restart. Real nginx,
// sidecars and PostgreSQL; what is asserted is who answered (the sidecar's /auth counts, the
// nginx module's hits) and what the caller got, never how fast.

type NativeStack = Awaited<ReturnType<typeof startNativeStack>>;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const randomSecret = () => randomBytes(32).toString('base64url');
const call = (stack: Stack, key: string, path = '/api') =>
  callStack(stack, path, { headers: apk(key) });
const metricsUrl = (stack: NativeStack) => stack.gateway().metricsUrl;

async function newKey(stack: Stack): Promise<{ id: number; token: string; name: string }> {
  const name = uniqueName('table');
  const key = await createClient(
    stack.baseUrl,
    stack.adminKey,
    { name, is_admin: false, generate_api_key: true },
    { ...(await stack.tls()), connectTo: '127.0.0.1' },
  );
  return { ...key, name };
}

async function keys(stack: Stack, n: number) {
  const out = [];
  for (let i = 0; i < n; i += 1) out.push(await newKey(stack));
  return out;
}

async function remove(stack: Stack, id: number): Promise<void> {
  const res = await callStack(stack, `${CLIENTS}/${id}`, {
    method: 'DELETE',
    headers: apk(stack.adminKey),
  });
  expect(res.status).toBe(200);
}

const moduleHits = async (stack: NativeStack) =>
  sample(await metricsText(metricsUrl(stack)), 'gateway_nginx_module_hits_total');
const moduleNobody = async (stack: NativeStack) =>
  sample(await metricsText(metricsUrl(stack)), 'gateway_nginx_module_nobody_total');
const moduleCopied = async (stack: NativeStack) =>
  sample(await metricsText(metricsUrl(stack)), 'gateway_nginx_module_copied_total');
const recordsHeld = async (stack: NativeStack) =>
  sample(await metricsText(metricsUrl(stack)), 'gateway_key_table_records');

/** The module's copied count once its sweeps have stopped (the same over 1.5 s: they tick each second). */
async function settledCopies(stack: NativeStack): Promise<number> {
  let last = await moduleCopied(stack);
  for (let i = 0; i < 40; i += 1) {
    await sleep(1_500);
    const now = await moduleCopied(stack);
    if (now === last) return now;
    last = now;
  }
  throw new Error('the sweeps did not settle in 60 s');
}

/** Rotates client `id`'s key with no grace (the old secret stops at once): its new token. */
async function rotateNow(stack: Stack, id: number): Promise<string> {
  const rotated = await callStack(stack, `${CLIENTS}/${id}/rotate`, {
    method: 'POST',
    headers: apk(stack.adminKey),
    json: { grace_period_seconds: 0 },
  });
  expect(rotated.status, rotated.text).toBe(200);
  return (rotated.json as { token: string }).token;
}

/** Polls until `cond` holds, at most `ms`. */
async function until(cond: () => Promise<boolean>, ms: number, what: string): Promise<void> {
  const started = Date.now();
  while (!(await cond())) {
    if (Date.now() - started > ms) throw new Error(`${what}: not within ${ms} ms`);
    await sleep(20);
  }
}

describe('two pairs on one database', () => {
  let a: NativeStack;
  let b: NativeStack;
  let databaseUrl: string;

  beforeAll(async () => {
    databaseUrl = await freshDatabase();
    a = await startNativeStack({ env: { DATABASE_URL: databaseUrl } });
    b = await startNativeStack({ env: { DATABASE_URL: databaseUrl } });
    await keyTableLoaded(metricsUrl(a));
    await keyTableLoaded(metricsUrl(b));
  }, 240_000);
  afterAll(async () => {
    await a?.close();
    await b?.close();
  });

  test("a client created on one pair: its first request on the other is nginx's, not a question", async () => {
    const asked = await apiKeyQuestions(metricsUrl(b));
    const hits = await moduleHits(b);
    const { token } = await newKey(a);
    // Its record reaches B through the feed; the bound is a first request ≥ 100 ms later.
    await sleep(100);
    const res = await call(b, token);
    expect(res.status).toBe(200);
    expect(await apiKeyQuestions(metricsUrl(b))).toBe(asked);
    expect(await moduleHits(b)).toBe(hits + 1);
  });

  test('a client created on one pair passes on the other at once, before its record arrives there', async () => {
    const { token } = await newKey(a);
    expect((await call(b, token)).status).toBe(200);
  });

  test('the module-off flag is a gauge, every other nginx count a counter with _total, and promtool check metrics finds nothing', async () => {
    const text = await metricsText(metricsUrl(a));
    expect(text).toMatch(/^# TYPE gateway_nginx_module_off gauge$/m);
    for (const [, name, type] of text.matchAll(/^# TYPE (gateway_nginx_\S+) (\S+)$/gm)) {
      if (type === 'counter') expect(name).toMatch(/_total$/);
    }
    // Prometheus' own linter (scripts/ensure-system.sh puts it in build/tools/): no output, 0.
    const checked = spawnSync(PROMTOOL, ['check', 'metrics'], { input: text, encoding: 'utf8' });
    expect(checked.error).toBeUndefined();
    expect(`${checked.stdout}${checked.stderr}`).toBe('');
    expect(checked.status).toBe(0);
  });

  test("last_used_at of a client used only through nginx's replica is set within a minute, on each pair, to the time of that use", async () => {
    const sql = new pg.Client({ connectionString: databaseUrl });
    await sql.connect();
    try {
      const lastUsed = async (id: number) =>
        (
          await sql.query<{ at: Date | null }>(
            'SELECT last_used_at AS at FROM api_clients WHERE id = $1',
            [id],
          )
        ).rows[0]?.at ?? null;
      for (const stack of [a, b]) {
        const { id, token } = await newKey(a);
        await sleep(200);
        const asked = await apiKeyQuestions(metricsUrl(stack));
        const usedAt = Date.now();
        expect((await call(stack, token)).status).toBe(200);
        // Decided by nginx alone: the sidecar's /auth, which writes it for what it decides, never saw it.
        expect(await apiKeyQuestions(metricsUrl(stack))).toBe(asked);
        expect(await lastUsed(id)).toBeNull();
        await until(async () => (await lastUsed(id)) !== null, 60_000, 'last_used_at set');
        // The usage counts' generation (5 s) is its granularity.
        const at = (await lastUsed(id))!.getTime();
        expect(Math.abs(at - usedAt)).toBeLessThanOrEqual(6_000);
      }
    } finally {
      await sql.end();
    }
  }, 150_000);

  test('ids no client has are refused by nginx alone, like a request without a credential: no question, no budget', async () => {
    // A pair quiet for a heartbeat: while a change's notice is pending (the creations of the
    // tests above), ids it does not hold are asked about, never refused
    // (docs/decisions/20261201-no-change-skipped.md).
    await sleep(1_500);
    const asked = await apiKeyQuestions(metricsUrl(b));
    const told = await moduleNobody(b);
    const answers = [];
    // More than the per-address budget's worth of a single id (20): an unknown id spends none.
    for (let i = 0; i < 60; i += 1) {
      const id = 900_000_000 + (i % 3);
      answers.push(await call(b, `${id}.${randomSecret()}`));
    }
    expect(new Set(answers.map((r) => r.status))).toEqual(new Set([401]));
    expect(answers[0]!.json).toEqual({
      errors: [{ code: 'INVALID_API_KEY', message: 'The API key is not valid.' }],
    });
    expect(answers[0]!.headers['www-authenticate']).toBe('apk');
    expect(await apiKeyQuestions(metricsUrl(b))).toBe(asked);
    // Each found nobody's by the nginx module, so the Lua code never read the request
    // (docs/decisions/20261129-guessed-ids-in-c.md); the workers flush their counts each second.
    await until(async () => (await moduleNobody(b)) - told >= 60, 5_000, 'the module told');
    expect((await moduleNobody(b)) - told).toBe(60);
  });

  // The nginx module finds such ids nobody's and the Lua code refuses them without reading the
  // request (docs/decisions/20261129-guessed-ids-in-c.md): what the request itself is refused
  // for still comes first, as for any other request.
  test.each([
    ['a header name that is not a token', 'X(A): b\r\n', 'GET', 400],
    ['a control byte in a value', 'X-A: b\x01c\r\n', 'GET', 400],
    ['a line without a colon', 'XA\r\n', 'GET', 400],
    ['more than 100 header lines', 'X-N: 1\r\n'.repeat(101), 'GET', 431],
    ['a method the gateway does not take', '', 'BREW', 405],
  ])(
    'an id nobody has, with %s: refused for that (%s), not as a guessed key',
    async (_, extra, method, status) => {
      const asked = await apiKeyQuestions(metricsUrl(b));
      for (const id of [900_000_123, 1]) {
        const bytes = Buffer.from(
          `${method} /api HTTP/1.1\r\nHost: ${b.fqdn}\r\nAuthorization: apk ${id}.${randomSecret()}\r\n${extra}Connection: close\r\n\r\n`,
          'latin1',
        );
        const tls = await b.tls();
        const port = Number(new URL(b.baseUrl).port);
        const answer = await exchange({ port, ca: tls.ca, servername: tls.servername }, bytes);
        expect(answer.kind === 'http' && answer.status).toBe(status);
      }
      expect(await apiKeyQuestions(metricsUrl(b))).toBe(asked);
    },
  );

  test("a deleted client's id, below the largest held, is refused by nginx alone too", async () => {
    const { id, token } = await newKey(a);
    await remove(a, id);
    await newKey(a);
    await sleep(200);
    const asked = await apiKeyQuestions(metricsUrl(b));
    for (const credential of [token, `${id}.${randomSecret()}`]) {
      const res = await call(b, credential);
      expect(res.status).toBe(401);
      expect(res.json).toEqual({
        errors: [{ code: 'INVALID_API_KEY', message: 'The API key is not valid.' }],
      });
    }
    expect(await apiKeyQuestions(metricsUrl(b))).toBe(asked);
  });

  test('a held client whose record is larger than the nginx module reads (many long rules) passes: never taken for nobody', async () => {
    const rules = [
      { methods: ['GET'], path: '/api' },
      ...Array.from({ length: 30 }, (_, i) => ({
        methods: ['GET'],
        path: `/long/${'a'.repeat(100)}${i}`,
      })),
    ];
    const name = uniqueName('large');
    const { id, token } = await createClient(
      a.baseUrl,
      a.adminKey,
      { name, is_admin: false, generate_api_key: true, permissions: rules },
      { ...(await a.tls()), connectTo: '127.0.0.1' },
    );
    await sleep(200);
    for (let i = 0; i < 3; i += 1) expect((await call(b, token)).status).toBe(200);
    expect((await call(b, `${id}.${randomSecret()}`)).status).toBe(401);
    expect((await call(b, token, '/other')).status).toBe(403);
  });

  test('wrong secrets for a held id are refused from its record, then 429 past its budget, and nobody is asked', async () => {
    const { id, token } = await newKey(a);
    await sleep(100);
    const asked = await apiKeyQuestions(metricsUrl(b));
    const statuses = [];
    for (let i = 0; i < 25; i += 1)
      statuses.push((await call(b, `${id}.${randomSecret()}`)).status);
    expect(statuses.slice(0, 20)).toEqual(Array(20).fill(401));
    expect(statuses.slice(22)).toEqual([429, 429, 429]);
    expect((await call(b, token)).status).toBe(200);
    expect(await apiKeyQuestions(metricsUrl(b))).toBe(asked);
  }, 60_000);

  test("a rotation and a deletion apply in every worker of the other pair: no worker's copy of the old record passes again", async () => {
    // The module keeps each worker's copies of records (docs/decisions/20261128-worker-record-
    // copies.md): every call below is a new TLS connection, so both workers serve them and
    // both hold copies before each change.
    const { id, token } = await newKey(a);
    await sleep(100);
    const hits = await moduleHits(b);
    for (let i = 0; i < 30; i += 1) expect((await call(b, token)).status).toBe(200);
    expect((await moduleHits(b)) - hits).toBe(30);

    const fresh = await rotateNow(a, id);
    await until(async () => (await call(b, token)).status === 401, 5_000, 'the old secret refused');
    // Fewer than the id's failure budget (20): past it the answer would be 429.
    for (let i = 0; i < 12; i += 1) expect((await call(b, token)).status).toBe(401);
    for (let i = 0; i < 30; i += 1) expect((await call(b, fresh)).status).toBe(200);

    await remove(a, id);
    await until(
      async () => (await call(b, fresh)).status === 401,
      5_000,
      'the deleted key refused',
    );
    for (let i = 0; i < 12; i += 1) expect((await call(b, fresh)).status).toBe(401);
  }, 90_000);

  test("each worker copies the table's records ahead of any request, and a change drops only the copy of the id it changed", async () => {
    // docs/decisions/20261129-worker-copies-kept.md: after a load every worker sweeps the table
    // into its own copies; a change names its ids (the `#changed:` slots), so the others stay.
    const known = await keys(a, 10);
    const { id, token } = await newKey(a);
    await sleep(100);
    const copied = await settledCopies(b);
    // Every record, in each worker (at least one), the new ones included.
    expect(copied).toBeGreaterThanOrEqual(await recordsHeld(b));

    const fresh = await rotateNow(a, id);
    await until(async () => (await call(b, token)).status === 401, 5_000, 'the old secret refused');
    expect((await call(b, fresh)).status).toBe(200);
    // Not swept again: the copies of every other record were kept through the change.
    expect(await settledCopies(b)).toBe(copied);
    const asked = await apiKeyQuestions(metricsUrl(b));
    for (const k of known) expect((await call(b, k.token)).status).toBe(200);
    expect(await apiKeyQuestions(metricsUrl(b))).toBe(asked);
  }, 120_000);

  test('the feed cut and a client deleted at once: refused within a second of the feed coming back; known keys are not asked about again', async () => {
    const known = await keys(a, 20);
    const victim = await newKey(a);
    await sleep(100);
    for (const { token } of [...known, victim]) expect((await call(b, token)).status).toBe(200);
    const asked = await apiKeyQuestions(metricsUrl(b));
    const logged = (await b.logs('gateway')).length;

    await cutListenConnections(databaseUrl, 2);
    // Deleted on A while B's feed is down: B hears nothing of it until it listens again.
    await remove(a, victim.id);
    expect((await call(a, victim.token)).status).toBe(401);
    await until(
      async () =>
        (await b.logs('gateway'))
          .slice(logged)
          .includes('listening for API client changes again; caught up'),
      10_000,
      'B listening again',
    );
    const back = Date.now();
    await until(
      async () => (await call(b, victim.token)).status === 401,
      1_000,
      'the deleted key refused on B',
    );
    expect(Date.now() - back).toBeLessThan(1_000);
    // Only what changed was dropped: the 20 known keys are still nginx's to decide.
    for (const { token } of known) expect((await call(b, token)).status).toBe(200);
    expect((await apiKeyQuestions(metricsUrl(b))) - asked).toBeLessThanOrEqual(3);
    expect(await b.logs('gateway')).not.toContain('every decision invalidated');
  }, 90_000);

  test('in shared memory: the hashes PostgreSQL holds, never a secret or the Authorization header', async () => {
    const { token, name } = await newKey(a);
    await sleep(100);
    for (let i = 0; i < 3; i += 1) expect((await call(b, token)).status).toBe(200);
    const [id, secret] = token.split('.') as [string, string];
    const wrong = `${'W'.repeat(21)}${secret.slice(21)}`;
    expect((await call(b, `${id}.${wrong}`)).status).toBe(401);
    if (process.getuid?.() !== 0) return; // reading another process's memory needs root
    const master = Number((await readFile(join(b.home, 'run', 'nginx.pid'), 'utf8')).trim());
    const children = (await readFile(`/proc/${master}/task/${master}/children`, 'utf8'))
      .trim()
      .split(/\s+/)
      .map(Number);
    expect(children.length).toBeGreaterThan(0);
    const digest = createHash('sha256').update(secret).digest();
    for (const worker of [master, ...children]) {
      const shared = await sharedMemory(worker);
      // The record is there (its name and its hash, as bytes) ...
      expect(shared.includes(encodeURIComponent(name)), `record in ${worker}`).toBe(true);
      expect(shared.includes(digest), `hash in ${worker}`).toBe(true);
      // ... the secret, the header and a wrong secret tried are not.
      expect(shared.includes(secret), `secret in ${worker}`).toBe(false);
      expect(shared.includes(`apk ${token}`), `header in ${worker}`).toBe(false);
      expect(shared.includes(wrong), `wrong secret in ${worker}`).toBe(false);
    }
  }, 60_000);
});

describe('one pair with its own PostgreSQL', () => {
  let s: NativeStack;
  let known: Awaited<ReturnType<typeof keys>>;

  beforeAll(async () => {
    s = await startNativeStack();
    await keyTableLoaded(metricsUrl(s));
    known = await keys(s, 20);
  }, 240_000);
  afterAll(async () => {
    await s?.close();
  });

  test('a restarted gateway decides its 20 known keys from their first request, asking the sidecar about none', async () => {
    await s.restart();
    await keyTableLoaded(metricsUrl(s));
    for (const { token } of known) expect((await call(s, token)).status).toBe(200);
    expect(await apiKeyQuestions(metricsUrl(s))).toBe(0);
    expect(
      sample(await metricsText(metricsUrl(s)), 'gateway_nginx_key_record_accepted_total'),
    ).toBe(20);
  }, 180_000);

  test('PostgreSQL down for longer than three decision lives: known keys pass, a deleted one stays refused, a never-seen one gets 503 JSON', async () => {
    const position = async () =>
      sample(await metricsText(metricsUrl(s)), 'gateway_key_table_position') ?? 0;
    const created = await position();
    const deleted = await newKey(s);
    await until(async () => (await position()) > created, 30_000, 'the creation in the key table');
    const before = await position();
    await remove(s, deleted.id);
    // The deletion in nginx's key table first (its change applied by the replica): stopped
    // before that, the id is merely absent, and an absent id is nobody's only while the feed is
    // live, so it would be 503 (asked, nobody to answer) instead of 401 once that lapses.
    await until(async () => (await position()) > before, 30_000, 'the deletion in the key table');
    await s.stopService('database');
    const started = Date.now();
    // auth_cache.max_age_ms is 30 s: 100 s is more than three lives of a learnt decision.
    while (Date.now() - started < 100_000) {
      for (const { token } of known) expect((await call(s, token)).status).toBe(200);
      expect((await call(s, deleted.token)).status).toBe(401);
      await sleep(5_000);
    }
    // The feed has been silent for far more than key_table's 5 s of liveness: an id nginx does
    // not hold is no longer refused as nobody's, and nobody can answer for it.
    const never = await call(s, `${880_000_000}.${randomSecret()}`);
    expect(never.status).toBe(503);
    expect(never.headers['content-type']).toBe('application/json');
    expect(never.json).toEqual({ errors: [expect.objectContaining({ code: 'AUTH_UNAVAILABLE' })] });
    const text = await metricsText(metricsUrl(s));
    expect(sample(text, 'gateway_key_table_trusted_seconds')).toBeGreaterThan(0);
  }, 240_000);
});

describe('a key table too small for its clients', () => {
  let s: NativeStack;
  let databaseUrl: string;

  beforeAll(async () => {
    databaseUrl = await freshDatabase();
    const dir = await mkdtemp(join(tmpdir(), 'gw-small-'));
    const settings = join(dir, 'gateway.yaml');
    await writeFile(settings, 'key_table:\n  size: 64k\n');
    s = await startNativeStack({ env: { DATABASE_URL: databaseUrl, GATEWAY_SETTINGS: settings } });
  }, 240_000);
  afterAll(async () => {
    await s?.close();
  });

  test('is never a silent half-replica: it says it is full, and the clients it could not hold are asked about and pass', async () => {
    // 600 clients written straight into PostgreSQL (64 KB holds a few hundred records), their
    // secrets known: each key is <id>.<its secret>, the table stores the SHA-256.
    const db = new pg.Client({ connectionString: databaseUrl });
    await db.connect();
    let rows: { id: number; secret: string }[];
    try {
      const inserted = await db.query<{ id: number; secret: string }>(
        `INSERT INTO api_clients (name, is_admin, key_hash)
         SELECT 'bulk-' || g, false, sha256(convert_to(rpad('s' || g, 43, 'x'), 'UTF8'))
           FROM generate_series(1, 600) g
         RETURNING id, rpad('s' || substr(name, 6), 43, 'x') AS secret`,
      );
      rows = inserted.rows;
    } finally {
      await db.end();
    }
    // The notices reach the sidecar, which applies them until a record finds no room.
    await until(
      async () => sample(await metricsText(metricsUrl(s)), 'gateway_key_table_full') === 1,
      30_000,
      'the key table full',
    );
    expect(await s.logs('gateway')).toContain('the key table is full');
    expect(await s.logs('proxy')).toContain('the key table is full');
    const last = rows.reduce((a, b) => (b.id > a.id ? b : a));
    const asked = await apiKeyQuestions(metricsUrl(s));
    expect((await call(s, `${last.id}.${last.secret}`)).status).toBe(200);
    // An id nobody has is no longer refused by nginx alone: it is asked about, and refused.
    expect((await call(s, `${990_000_000}.${randomSecret()}`)).status).toBe(401);
    expect(await apiKeyQuestions(metricsUrl(s))).toBeGreaterThanOrEqual(asked + 2);
  }, 120_000);
});
