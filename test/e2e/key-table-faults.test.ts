import pg from 'pg';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { freshDatabase } from '../support/database.js';
import { keyTableLoaded } from '../support/key-table.js';
import { CLIENTS, createClient, uniqueName } from '../support/management.js';
import { startNativeStack } from '../support/native-stack.js';
import { apk } from '../support/sidecar.js';
import type { Stack } from '../support/stack.js';
import { callStack } from '../support/stack-http.js';

// Faults on the key table's change feed (docs/decisions/20261201-no-change-skipped.md): a change
// whose rows cannot be read is never skipped. Real nginx, sidecars and PostgreSQL, two pairs on
// one database; what is asserted is what a caller gets, never how fast.

type NativeStack = Awaited<ReturnType<typeof startNativeStack>>;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** The sidecar's statement timeout (sidecar/db/pool.ts): a lock held longer fails its read. */
const STATEMENT_TIMEOUT_MS = 10_000;

async function newKey(stack: Stack, isAdmin = false): Promise<{ id: number; token: string }> {
  return createClient(
    stack.baseUrl,
    stack.adminKey,
    { name: uniqueName('fault'), is_admin: isAdmin, generate_api_key: true },
    { ...(await stack.tls()), connectTo: '127.0.0.1' },
  );
}

/** The status a caller gets for `token` (a slow answer counts as 0: not a pass). */
async function status(stack: Stack, token: string, path = '/api'): Promise<number> {
  const res = await Promise.race([
    callStack(stack, path, { headers: apk(token) }),
    sleep(3_000).then(() => null),
  ]);
  return res?.status ?? 0;
}

/** Polls until `token` gets `want` on `stack`: how long it took, or throws past `ms`. */
async function within(
  stack: Stack,
  token: string,
  want: number,
  ms: number,
  path = '/api',
): Promise<number> {
  const started = Date.now();
  for (;;) {
    if ((await status(stack, token, path)) === want) return Date.now() - started;
    if (Date.now() - started > ms) throw new Error(`not ${want} within ${ms} ms`);
    await sleep(100);
  }
}

/**
 * Commits `change` (with `$1` = `id`) and holds `api_clients` locked ACCESS EXCLUSIVE while
 * `during` runs. The lock is queued behind the change's transaction, so it is taken the moment
 * that commits, before any sidecar can read the changed row: their reads wait behind it.
 */
async function changedThenLocked(
  databaseUrl: string,
  change: string,
  id: number,
  during: () => Promise<void>,
): Promise<void> {
  const changer = new pg.Client({ connectionString: databaseUrl });
  const locker = new pg.Client({ connectionString: databaseUrl });
  await changer.connect();
  await locker.connect();
  try {
    await changer.query('BEGIN');
    await changer.query(change, [id]);
    await locker.query('BEGIN');
    const locked = locker.query('LOCK TABLE api_clients IN ACCESS EXCLUSIVE MODE');
    await sleep(200);
    await changer.query('COMMIT');
    await locked;
    await during();
    await locker.query('COMMIT');
  } finally {
    await changer.end();
    await locker.end();
  }
}

describe('a change whose rows cannot be read', () => {
  let a: NativeStack;
  let b: NativeStack;
  let databaseUrl: string;
  let sql: pg.Client;

  beforeAll(async () => {
    databaseUrl = await freshDatabase();
    a = await startNativeStack({ env: { DATABASE_URL: databaseUrl } });
    b = await startNativeStack({ env: { DATABASE_URL: databaseUrl } });
    await keyTableLoaded(a.gateway().metricsUrl);
    await keyTableLoaded(b.gateway().metricsUrl);
    sql = new pg.Client({ connectionString: databaseUrl });
    await sql.connect();
  }, 240_000);
  afterAll(async () => {
    await sql?.end();
    await a?.close();
    await b?.close();
  });

  test.each([
    ['a deletion', 'DELETE FROM api_clients WHERE id = $1', '/api', 401],
    [
      'a rotation past its grace',
      "UPDATE api_clients SET key_hash = sha256('rotated'::bytea), previous_key_hash = NULL, previous_key_expires_at = NULL WHERE id = $1",
      '/api',
      401,
    ],
    [
      'an expiry set in the past',
      "UPDATE api_clients SET expires_at = now() - interval '1 second' WHERE id = $1",
      '/api',
      401,
    ],
    [
      'permissions narrowed',
      `UPDATE api_clients SET permissions = '[{"methods": ["GET"], "path": "/elsewhere/**"}]' WHERE id = $1`,
      '/api',
      403,
    ],
    ['an admin demoted', 'UPDATE api_clients SET is_admin = false WHERE id = $1', CLIENTS, 403],
  ])(
    '%s, followed at once by a table lock past the statement timeout: never passing meanwhile, refused on every pair once the lock ends',
    async (_what, change, path, refused) => {
      const target = await newKey(a, path === CLIENTS);
      const known = await newKey(a);
      for (const stack of [a, b]) {
        expect(await status(stack, target.token, path)).toBe(200);
        expect(await status(stack, known.token)).toBe(200);
      }
      await changedThenLocked(databaseUrl, change, target.id, async () => {
        // Held past the sidecars' statement timeout: their reads of the changed row fail.
        const heldUntil = Date.now() + STATEMENT_TIMEOUT_MS + 3_000;
        while (Date.now() < heldUntil) {
          // Meanwhile the changed key never passes as before (asked about: no answer, or 503),
          // while a key nobody changed still does, from nginx's replica.
          for (const stack of [a, b]) {
            expect(await status(stack, target.token, path)).not.toBe(200);
            expect(await status(stack, known.token)).toBe(200);
          }
          await sleep(500);
        }
      });
      // Once the database answers again each pair catches up and refuses it, and keeps refusing.
      for (const stack of [a, b]) await within(stack, target.token, refused, 5_000, path);
      await sleep(3_000);
      for (const stack of [a, b]) {
        expect(await status(stack, target.token, path)).toBe(refused);
        expect(await status(stack, known.token)).toBe(200);
      }
    },
    120_000,
  );

  test('a backend terminated during the read: the deletion is applied once the sidecar reads again', async () => {
    const doomed = await newKey(a);
    expect(await status(b, doomed.token)).toBe(200);
    await changedThenLocked(
      databaseUrl,
      'DELETE FROM api_clients WHERE id = $1',
      doomed.id,
      async () => {
        await sleep(1_000);
        // Every sidecar backend waiting on the lock is terminated mid-read.
        await sql.query(
          `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
            WHERE wait_event_type = 'Lock' AND pid <> pg_backend_pid()
              AND application_name NOT LIKE 'gateway-sidecar-listen%'`,
        );
        await sleep(500);
        for (const stack of [a, b]) expect(await status(stack, doomed.token)).not.toBe(200);
      },
    );
    for (const stack of [a, b]) await within(stack, doomed.token, 401, 5_000);
  }, 120_000);
});
