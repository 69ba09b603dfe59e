import { afterAll, beforeAll, expect, test } from 'vitest';
import { createPool } from '../../../sidecar/db/pool.js';
import { silentLogger } from '../../../sidecar/log.js';
import { freshDatabase } from '../../support/database.js';
import { http } from '../../support/http.js';
import { apk, startTestSidecar, type TestSidecar } from '../../support/sidecar.js';

let databaseUrl: string;
let sidecar: TestSidecar;

beforeAll(async () => {
  databaseUrl = await freshDatabase();
  sidecar = await startTestSidecar(databaseUrl, { metrics: true });
}, 60_000);
afterAll(async () => {
  await sidecar?.close();
});

const queries = (text: string, pool: string) =>
  Number(
    new RegExp(`^gateway_db_query_duration_seconds_count\\{pool="${pool}"\\} (\\d+)$`, 'm').exec(
      text,
    )?.[1] ?? '0',
  );

test('the last-use write after an answer runs on the writes pool, not on the look-ups’ pool', async () => {
  const before = (await http(`${sidecar.metricsUrl}/metrics`)).text;
  expect((await http(`${sidecar.url}/auth`, { headers: apk(sidecar.adminKey) })).status).toBe(204);
  // The write is made after the answer (in the batch written once a second), and each query
  // is counted as it ends: wait until both counts have moved, then check by how much.
  let after = before;
  for (
    let i = 0;
    i < 100 &&
    (queries(after, 'writes') === queries(before, 'writes') ||
      queries(after, 'auth') === queries(before, 'auth'));
    i += 1
  ) {
    await new Promise((r) => setTimeout(r, 20));
    after = (await http(`${sidecar.metricsUrl}/metrics`)).text;
  }
  expect(queries(after, 'writes')).toBe(queries(before, 'writes') + 1);
  // The look-up itself, and nothing else, on the auth pool.
  expect(queries(after, 'auth')).toBe(queries(before, 'auth') + 1);
  const pool = createPool(databaseUrl, silentLogger);
  try {
    const { rows } = await pool.query<{ used: Date | null }>(
      'SELECT last_used_at AS used FROM api_clients WHERE is_admin',
    );
    expect(rows[0]?.used).toBeInstanceOf(Date);
  } finally {
    await pool.end();
  }
});

test('pool settings: plans made once, commits not waiting for the disk, both, or neither', async () => {
  const show = async (options: Parameters<typeof createPool>[2]) => {
    const pool = createPool(databaseUrl, silentLogger, options);
    try {
      const plans = await pool.query<{ plan_cache_mode: string }>('SHOW plan_cache_mode');
      const commits = await pool.query<{ synchronous_commit: string }>('SHOW synchronous_commit');
      return [plans.rows[0]?.plan_cache_mode, commits.rows[0]?.synchronous_commit];
    } finally {
      await pool.end();
    }
  };
  expect(await show({})).toEqual(['auto', 'on']);
  expect(await show({ genericPlans: true })).toEqual(['force_generic_plan', 'on']);
  expect(await show({ asyncCommit: true })).toEqual(['auto', 'off']);
  expect(await show({ genericPlans: true, asyncCommit: true })).toEqual([
    'force_generic_plan',
    'off',
  ]);
});
