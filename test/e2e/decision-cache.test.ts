import { createHash } from 'node:crypto';
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { freshDatabase } from '../support/database.js';
import { learntRecordsSettings } from '../support/key-table.js';
import { cutListenConnections } from '../support/listen-connections.js';
import { CLIENTS, createClient, uniqueName } from '../support/management.js';
import { startNativeStack } from '../support/native-stack.js';
import { sharedMemory } from '../support/shared-memory.js';
import { apk } from '../support/sidecar.js';
import type { Stack } from '../support/stack.js';
import { callStack } from '../support/stack-http.js';

// Two native proxy+sidecar pairs on one PostgreSQL: the decision cache in nginx's shared
// memory, revocation pushed across pairs, the LISTEN connection cut and restored, a frozen
// sidecar, and where the credential is (never) kept. Real nginx, sidecars and PostgreSQL.

type NativeStack = Stack & { home: string };
let a: NativeStack;
let b: NativeStack;
let databaseUrl: string;

beforeAll(async () => {
  // nginx learning key records on demand: the key table's replica off (its own suite is
  // key-table.test.ts), as an operator who sets key_table.enabled false runs it.
  const settings = await learntRecordsSettings();
  databaseUrl = await freshDatabase();
  a = await startNativeStack({ env: { DATABASE_URL: databaseUrl, GATEWAY_SETTINGS: settings } });
  b = await startNativeStack({ env: { DATABASE_URL: databaseUrl, GATEWAY_SETTINGS: settings } });
}, 240_000);
afterAll(async () => {
  await a?.close();
  await b?.close();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function call(stack: Stack, path: string, key: string, method = 'GET') {
  return callStack(stack, path, { method, headers: apk(key) });
}

async function newKey(stack: Stack): Promise<{ id: number; token: string }> {
  return createClient(
    stack.baseUrl,
    stack.adminKey,
    { name: uniqueName('cache'), is_admin: false, generate_api_key: true },
    { ...(await stack.tls()), connectTo: '127.0.0.1' },
  );
}

/** Polls until `path` is refused on `stack`; resolves with how long that took (ms). */
async function refusedWithin(stack: Stack, key: string, limitMs: number): Promise<number> {
  const started = Date.now();
  for (;;) {
    const res = await call(stack, '/api', key);
    if (res.status === 401) return Date.now() - started;
    expect(res.status).toBe(200);
    if (Date.now() - started > limitMs) throw new Error(`still accepted after ${limitMs} ms`);
    await sleep(10);
  }
}

describe('revocation is pushed to every pair', () => {
  test('a key seen by both pairs is refused by the deleting pair at once and by the other well before the lifetime', async () => {
    const { id, token } = await newKey(a);
    for (const stack of [a, b, a, b]) expect((await call(stack, '/api', token)).status).toBe(200);
    const deleted = await call(a, `${CLIENTS}/${id}`, a.adminKey, 'DELETE');
    expect(deleted.status).toBe(200);
    // The pair that served DELETE invalidated its nginx before answering.
    expect((await call(a, '/api', token)).status).toBe(401);
    // The other pair hears of it through LISTEN/NOTIFY, not by the 30 s lifetime running out.
    await refusedWithin(b, token, 5_000);
  });

  test('a rotation with no grace period on one pair is pushed to the other: the old secret is refused there well before the lifetime', async () => {
    const { id, token } = await newKey(a);
    for (const stack of [a, b, a, b]) expect((await call(stack, '/api', token)).status).toBe(200);
    const rotated = await callStack(a, `${CLIENTS}/${id}/rotate`, {
      method: 'POST',
      headers: apk(a.adminKey),
      json: { grace_period_seconds: 0 },
    });
    expect(rotated.status).toBe(200);
    expect((await call(a, '/api', token)).status).toBe(401);
    await refusedWithin(b, token, 5_000);
    const fresh = (rotated.json as { token: string }).token;
    expect((await call(b, '/api', fresh)).status).toBe(200);
  });

  test('an expiry set on one pair binds the decision the other pair cached before: refused there from the expiry on', async () => {
    const { id, token } = await newKey(a);
    for (const stack of [a, b, a, b]) expect((await call(stack, '/api', token)).status).toBe(200);
    const expiresAt = Date.now() + 2_000;
    const put = await callStack(a, `${CLIENTS}/${id}`, {
      method: 'PUT',
      headers: apk(a.adminKey),
      json: { expires_at: new Date(expiresAt).toISOString() },
    });
    expect(put.status).toBe(200);
    // B's cached "yes" had no end but its 30 s lifetime; the change is pushed, B asks again and
    // keeps the new answer no longer than the expiry.
    const waited = await refusedWithin(b, token, 4_000);
    expect(Date.now()).toBeGreaterThanOrEqual(expiresAt);
    expect(waited).toBeLessThan(2_000 + 500);
  });

  test('the LISTEN connection cut: the sidecar drops what it holds, listens again, and pushes are immediate again', async () => {
    const { id, token } = await newKey(a);
    expect((await call(b, '/api', token)).status).toBe(200);
    await cutListenConnections(databaseUrl, 2);
    // Both sidecars notice, invalidate everything, and listen again.
    for (const stack of [a, b]) {
      for (
        let i = 0;
        !(await stack.logs('gateway')).includes('listening for API client changes again');
        i++
      ) {
        if (i > 200) throw new Error('the sidecar did not listen again');
        await sleep(25);
      }
    }
    const admin = new pg.Client({ connectionString: databaseUrl });
    await admin.connect();
    try {
      const listening = await admin.query(
        "SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = 'gateway-sidecar-listen' AND datname = current_database()",
      );
      expect(listening.rows[0].n).toBe(2);
    } finally {
      await admin.end();
    }
    expect((await call(b, '/api', token)).status).toBe(200);
    expect((await call(a, `${CLIENTS}/${id}`, a.adminKey, 'DELETE')).status).toBe(200);
    await refusedWithin(b, token, 5_000);
  });
});

describe('a frozen sidecar', () => {
  test('a never-seen key is refused with 503 JSON within the auth timeout, not after 60 s', async () => {
    const { token } = await newKey(a);
    const pid = Number((await readFile(join(a.home, 'run', 'sidecar.pid'), 'utf8')).trim());
    process.kill(pid, 'SIGSTOP');
    try {
      const started = Date.now();
      const res = await call(a, '/api', token);
      const elapsed = Date.now() - started;
      expect(res.status).toBe(503);
      expect(res.json).toEqual({ errors: [expect.objectContaining({ code: 'AUTH_UNAVAILABLE' })] });
      // timeouts.auth_ms is 3000 by default; far from nginx's own 60 s.
      expect(elapsed).toBeGreaterThanOrEqual(2_500);
      expect(elapsed).toBeLessThan(10_000);
    } finally {
      process.kill(pid, 'SIGCONT');
    }
    expect((await call(a, '/api', token)).status).toBe(200);
  }, 30_000);
});

describe('the credential is never kept', () => {
  async function filesUnder(dir: string): Promise<string[]> {
    const entries = await readdir(dir, { recursive: true, withFileTypes: true }).catch(() => []);
    return entries.filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name));
  }

  test('not on disk, and not in the shared memory that holds the decisions', async () => {
    const name = uniqueName('marker');
    const { token } = await createClient(
      a.baseUrl,
      a.adminKey,
      { name, is_admin: false, generate_api_key: true },
      { ...(await a.tls()), connectTo: '127.0.0.1' },
    );
    for (let i = 0; i < 5; i += 1) expect((await call(a, '/api', token)).status).toBe(200);
    const secret = token.split('.')[1] ?? '';
    expect(secret.length).toBeGreaterThan(30);
    // Wrong secrets for the same id are decided from its key record: none of them is kept either.
    const id = token.split('.')[0];
    const wrongSecrets = ['W', 'X', 'Y'].map((c) => `${c.repeat(21)}${secret.slice(21)}`);
    for (const wrong of wrongSecrets) {
      expect((await call(a, '/api', `${id}.${wrong}`)).status).toBe(401);
    }

    // Disk: everything the gateway writes (config, logs, run, PostgreSQL data) and /dev/shm.
    const files = [...(await filesUnder(a.home)), ...(await filesUnder('/dev/shm'))];
    expect(files.length).toBeGreaterThan(10);
    const holding: string[] = [];
    for (const file of files) {
      const info = await stat(file).catch(() => null);
      if (!info || info.size > 64 * 1024 * 1024) continue;
      const bytes = await readFile(file).catch(() => null);
      if (bytes?.includes(secret)) holding.push(file);
    }
    expect(holding).toEqual([]);

    // Memory: nginx's shared zones, read from a worker. The decision for this key is there
    // (its client name proves we read the right memory), the key itself is not.
    if (process.getuid?.() !== 0) return; // reading another process's memory needs root
    const master = Number((await readFile(join(a.home, 'run', 'nginx.pid'), 'utf8')).trim());
    const children = (await readFile(`/proc/${master}/task/${master}/children`, 'utf8'))
      .trim()
      .split(/\s+/)
      .map(Number);
    expect(children.length).toBeGreaterThan(0);
    for (const worker of [master, ...children]) {
      const shared = await sharedMemory(worker);
      expect(shared.length).toBeGreaterThan(1024 * 1024);
      expect(shared.includes(encodeURIComponent(name)), `decision in ${worker}`).toBe(true);
      expect(shared.includes(secret), `secret in ${worker}`).toBe(false);
      expect(shared.includes(`apk ${token}`), `header in ${worker}`).toBe(false);
      // The key record is there, holding what PostgreSQL holds: the secret's SHA-256.
      const stored = createHash('sha256').update(secret).digest('hex');
      expect(shared.includes(stored), `key record in ${worker}`).toBe(true);
      for (const wrong of wrongSecrets) {
        expect(shared.includes(wrong), `wrong secret in ${worker}`).toBe(false);
      }
    }
  }, 60_000);
});

describe('headers of an HTTPS-only gateway', () => {
  test("HSTS on every answer; nosniff and no-store on the gateway's own JSON", async () => {
    const { token } = await newKey(a);
    const ok = await call(a, '/api', token);
    const refused = await call(a, '/api', `${token.split('.')[0]}.${'x'.repeat(43)}`);
    const missing = await call(a, '/_auth', token);
    for (const res of [ok, refused, missing]) {
      expect(res.headers['strict-transport-security']).toBe('max-age=31536000');
    }
    for (const res of [refused, missing]) {
      expect(res.headers['x-content-type-options']).toBe('nosniff');
      expect(res.headers['cache-control']).toBe('no-store');
      expect(res.headers['content-type']).toBe('application/json');
    }
    expect(refused.status).toBe(401);
    expect(missing.status).toBe(404);
  });
});
