import { readdirSync, readFileSync } from 'node:fs';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, expect, test } from 'vitest';
import { LISTING_NICENESS, ListThread } from '../../../sidecar/clients/listing/thread.js';
import { isConnectionError } from '../../../sidecar/db/pool.js';
import { silentLogger } from '../../../sidecar/log.js';
import { freshDatabase } from '../../support/database.js';
import { http } from '../../support/http.js';
import { CLIENTS } from '../../support/management.js';
import { apk, startTestSidecar, type TestSidecar } from '../../support/sidecar.js';

/**
 * The listing thread (sidecar/clients/listing/thread.ts): whole listings read and serialised off
 * the main thread, at a lower priority. What the listing holds is list-stream.test.ts's; this
 * is what the thread adds: where it runs, and how a listing ends when the thread cannot go on.
 */

const ROWS = 1000;

let sidecar: TestSidecar;
let db: string;
const threads: ListThread[] = [];
beforeAll(async () => {
  db = await freshDatabase();
  sidecar = await startTestSidecar(db);
  const client = new pg.Client({ connectionString: db });
  await client.connect();
  try {
    await client.query(
      `INSERT INTO api_clients (name, is_admin, api_client_id) SELECT 'row-' || g, false, 'subject-' || g
       FROM generate_series(1, $1::int) AS g`,
      [ROWS],
    );
  } finally {
    await client.end();
  }
});
afterEach(async () => {
  await Promise.all(threads.splice(0).map((thread) => thread.close()));
});
afterAll(() => sidecar?.close());

function thread(databaseUrl = db): ListThread {
  const made = new ListThread(databaseUrl, silentLogger);
  threads.push(made);
  return made;
}

/** Every id a listing yields, its batches' text parsed. */
async function ids(batches: AsyncGenerator<{ json: string | Uint8Array }>): Promise<number[]> {
  const all: number[] = [];
  for await (const batch of batches) all.push(...parsed(batch.json));
  return all;
}

function parsed(json: string | Uint8Array): number[] {
  const text = typeof json === 'string' ? json : Buffer.from(json).toString('utf8');
  return (JSON.parse(`[${text}]`) as { id: number }[]).map((item) => item.id);
}

/** This process's threads' nice values, by thread id (Linux: a nice value is a thread's). */
function niceValues(): Map<number, number> {
  const values = new Map<number, number>();
  for (const tid of readdirSync('/proc/self/task')) {
    const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
    // After the command name in parentheses: field 19 of stat(5) is the 17th.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    values.set(Number(tid), Number(fields[16]));
  }
  return values;
}

test('a listing is read on a thread of its own, at a lower priority than the rest', async () => {
  const before = niceValues();
  const listings = thread();
  const all = await ids(listings.streamRecords('id', null, 350, null));
  expect(all).toHaveLength(ROWS + 1); // and the bootstrap admin
  expect(all).toEqual([...all].sort((a, b) => a - b));
  // Lowered from the process's own nice value (0 unless the tests run under `nice`).
  const own = before.get(process.pid)!;
  const lowered = [...niceValues()].filter(
    ([tid, nice]) => !before.has(tid) && nice === Math.min(19, own + LISTING_NICENESS),
  );
  expect(lowered).toHaveLength(1);
  // The thread that calls, as every other thread of this process, keeps its priority.
  expect(niceValues().get(process.pid)).toBe(before.get(process.pid));
});

test('the batches come as UTF-8 bytes, the keys of their first and last rows beside them', async () => {
  const listings = thread();
  const batches = listings.streamRecords('id', { direction: 'after', key: [10] }, 100, null);
  const first = await batches.next();
  await batches.return(undefined);
  expect(first.done).toBe(false);
  const batch = first.value!;
  expect(batch.json).toBeInstanceOf(Uint8Array);
  expect(parsed(batch.json)).toEqual(Array.from({ length: 100 }, (_, i) => 11 + i));
  expect(batch).toMatchObject({ count: 100, first: [11], last: [110] });
});

test('a database that cannot be reached fails the listing before its first batch, as such', async () => {
  const url = new URL(db);
  url.port = '1';
  const listings = thread(url.toString());
  const failed = await listings
    .streamRecords('id', null, 350, null)
    .next()
    .then(
      () => null,
      (err: unknown) => err,
    );
  expect(failed).toBeInstanceOf(Error);
  // So the route answers 503 DATABASE_UNAVAILABLE, as for a listing on the main thread.
  expect(isConnectionError(failed)).toBe(true);
});

test('a thread stopped mid-listing fails that listing; the next listing starts another', async () => {
  const listings = thread();
  const batches = listings.streamRecords('id', null, 100, null);
  expect((await batches.next()).done).toBe(false);
  await listings.close();
  await expect(batches.next()).rejects.toThrow(/listing thread/);
  expect(await ids(listings.streamRecords('id', null, 350, null))).toHaveLength(ROWS + 1);
});

test('listings stopped early leave nothing open: twenty of them, then a whole one', async () => {
  const listings = thread();
  for (let i = 0; i < 20; i += 1) {
    const batches = listings.streamRecords('id', null, 50, null);
    await batches.next();
    await batches.return(undefined);
  }
  expect(await ids(listings.streamRecords('name', null, 350, 'row-1'))).toHaveLength(
    // row-1, row-10..19, row-100..199, row-1000
    1 + 10 + 100 + 1,
  );
});

test('the sidecar starts its listing thread with itself, and lists through it', async () => {
  // No thread of this file's is open (afterEach): the one lowered thread is the sidecar's.
  const own = niceValues().get(process.pid)!;
  const lowered = [...niceValues().values()].filter(
    (nice) => nice === Math.min(19, own + LISTING_NICENESS),
  );
  expect(lowered).toHaveLength(1);
  const res = await http(`${sidecar.url}${CLIENTS}?sort=-id`, { headers: apk(sidecar.adminKey) });
  expect(res.status).toBe(200);
  const body = res.json as { items: { id: number }[]; response_metadata: { total: number } };
  expect(body.items.map((item) => item.id)).toEqual(
    Array.from({ length: ROWS + 1 }, (_, i) => ROWS + 1 - i),
  );
  expect(body.response_metadata.total).toBe(ROWS + 1);
});
