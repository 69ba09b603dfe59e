import type pg from 'pg';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { AuthFailureCounter } from '../../../sidecar/audit/auth-failure-counter.js';
import type { AuthFailure } from '../../../sidecar/auth/decision.js';
import { migrate } from '../../../sidecar/db/migrate.js';
import { createPool } from '../../../sidecar/db/pool.js';
import { silentLogger } from '../../../sidecar/log.js';
import { freshDatabase } from '../../support/database.js';
import { capturingLogger, movableClock } from '../../support/sidecar.js';

// A flood of refused credentials, each naming another client: memory and table stay bounded,
// and no refusal goes uncounted.

let pool: pg.Pool;
beforeAll(async () => {
  pool = createPool(await freshDatabase(), silentLogger);
  await migrate(pool, silentLogger);
});
afterAll(async () => {
  await pool?.end();
});

const refusal = (
  clientRow: number,
  code: AuthFailure['code'] = 'INVALID_API_KEY',
): AuthFailure => ({
  ok: false,
  code,
  message: 'refused',
  clientRow,
});

async function table(): Promise<{ rows: number; total: number; named: number }> {
  const { rows } = await pool.query<{ rows: number; total: number; named: number }>(
    `SELECT count(*)::int AS rows, coalesce(sum(count), 0)::int AS total,
            count(api_key_id)::int AS named FROM auth_failures`,
  );
  return rows[0]!;
}

test('200,000 refusals naming 200,000 clients: at most maxEntries counts in memory and rows in the table, every refusal counted', async () => {
  const clock = movableClock(Date.UTC(2026, 10, 23, 12, 0, 10));
  const log = capturingLogger();
  const counter = new AuthFailureCounter(pool, log, clock, { maxEntries: 100 });
  let largest = 0;
  for (let i = 1; i <= 200_000; i += 1) {
    counter.refused(refusal(i, i % 2 === 0 ? 'INVALID_API_KEY' : 'API_CLIENT_EXPIRED'));
    largest = Math.max(largest, counter.size);
  }
  // 100 named counts, plus one "no client" count per reason.
  expect(largest).toBeLessThanOrEqual(102);
  await counter.flush();
  expect(counter.size).toBe(0);
  const after = await table();
  expect(after.total).toBe(200_000);
  expect(after.rows).toBeLessThanOrEqual(102);
  expect(after.named).toBe(100);
  // The same clients and minute again: the rows' counts grow, the rows do not.
  for (let i = 0; i < 50_000; i += 1) {
    const id = (i % 100) + 1;
    counter.refused(refusal(id, id % 2 === 0 ? 'INVALID_API_KEY' : 'API_CLIENT_EXPIRED'));
  }
  await counter.flush();
  const again = await table();
  expect(again.total).toBe(250_000);
  expect(again.rows).toBe(after.rows);
  // One log line per (client, reason, minute), never one per refusal.
  const lines = log.lines.filter((l) => l.includes('"authentication refused"'));
  expect(lines.length).toBe(after.rows);
  expect(lines.every((l) => /"count":\d+/.test(l))).toBe(true);
  await counter.close();
});

test('while the database is away, counts wait in bounded memory and arrive when it is back', async () => {
  await pool.query('TRUNCATE auth_failures');
  const clock = movableClock(Date.UTC(2026, 10, 23, 13, 0, 0));
  let down = true;
  const flaky = {
    query: (...args: Parameters<pg.Pool['query']>) => {
      if (down) return Promise.reject(new Error('connection refused'));
      return (pool.query as (...a: unknown[]) => unknown)(...args);
    },
  } as unknown as pg.Pool;
  const log = capturingLogger();
  const counter = new AuthFailureCounter(flaky, log, clock, { maxEntries: 50 });
  // Ten minutes of floods with the database away.
  for (let minute = 0; minute < 10; minute += 1) {
    for (let i = 1; i <= 10_000; i += 1) counter.refused(refusal(minute * 10_000 + i));
    await counter.flush();
    expect(counter.size).toBeLessThanOrEqual(50 + 10);
    clock.advance(60_000);
  }
  expect(log.lines.some((l) => l.includes('could not record authentication failure counts'))).toBe(
    true,
  );
  down = false;
  await counter.flush();
  const back = await table();
  expect(back.total).toBe(100_000);
  expect(back.rows).toBeLessThanOrEqual(60);
  await counter.close();
});
