import pg from 'pg';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { freshDatabase } from '../support/database.js';
import { keyTableLoaded } from '../support/key-table.js';
import {
  changedThenLocked,
  closeAgent,
  type NativeStack,
  newKey,
  REFUSING_CHANGES,
  STATEMENT_TIMEOUT_MS,
  sleep,
  status,
  within,
} from '../support/key-table-faults.js';
import { startNativeStack } from '../support/native-stack.js';

// Faults on the key table's change feed (docs/decisions/20261201-no-change-skipped.md): a change
// whose rows cannot be read is never skipped. Real nginx, sidecars and PostgreSQL, two pairs on
// one database; what is asserted is what a caller gets, never how fast.

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
    for (const stack of [a, b]) if (stack) closeAgent(stack);
    await sql?.end();
    await a?.close();
    await b?.close();
  });

  test.each(REFUSING_CHANGES.map((c) => [c.what, c] as const))(
    '%s, followed at once by a table lock past the statement timeout: never passing meanwhile, refused on every pair once the lock ends',
    async (_what, { sql: change, path, refused, admin }) => {
      const target = await newKey(a, admin);
      const known = await newKey(a);
      for (const stack of [a, b]) {
        expect(await status(stack, target.token, path)).toBe(200);
        expect(await status(stack, known.token)).toBe(200);
      }
      const changeIt = async (db: pg.Client) => void (await db.query(change, [target.id]));
      await changedThenLocked(databaseUrl, changeIt, async () => {
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
      async (db) => void (await db.query('DELETE FROM api_clients WHERE id = $1', [doomed.id])),
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
