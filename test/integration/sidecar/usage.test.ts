import pg from 'pg';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { Queryable } from '../../../sidecar/db/queryable.js';
import { silentLogger } from '../../../sidecar/log.js';
import type { UsageCount } from '../../../sidecar/nginx/usage-counts.js';
import { UsagePruner } from '../../../sidecar/usage/usage-pruner.js';
import { UsageRecorder } from '../../../sidecar/usage/usage-recorder.js';
import { freshDatabase } from '../../support/database.js';
import { http } from '../../support/http.js';
import { CLIENTS, createClient, uniqueName } from '../../support/management.js';
import { apk, startTestSidecar, type TestSidecar } from '../../support/sidecar.js';

// The usage series and the retention, against real PostgreSQL: rows are written here directly
// (nginx's counting is test/e2e/rate-limits.test.ts's).

let sidecar: TestSidecar;
let pool: pg.Pool;
beforeAll(async () => {
  const url = await freshDatabase();
  sidecar = await startTestSidecar(url);
  pool = new pg.Pool({ connectionString: url, max: 2 });
});
afterAll(async () => {
  await pool?.end();
  await sidecar?.close();
});

const get = (path: string) => http(`${sidecar.url}${path}`, { headers: apk(sidecar.adminKey) });

async function client(): Promise<number> {
  const { id } = await createClient(sidecar.url, sidecar.adminKey, {
    name: uniqueName('usage'),
    is_admin: false,
    generate_api_key: true,
  });
  return id;
}

async function usageRow(id: number, at: string, allowed: number, limited: number) {
  await pool.query(
    'INSERT INTO api_client_usage (api_key_id, window_start, allowed, limited) VALUES ($1, $2, $3, $4)',
    [id, at, allowed, limited],
  );
}

describe('GET /v1/management/api-clients/{id}/usage', () => {
  test('a zero-filled series per step: allowed, limited and failed authentications summed', async () => {
    const id = await client();
    await usageRow(id, '2026-03-01T10:00:00Z', 5, 1);
    await usageRow(id, '2026-03-01T10:01:00Z', 7, 0);
    await usageRow(id, '2026-03-01T12:30:00Z', 3, 2);
    await pool.query(
      `INSERT INTO auth_failures (api_key_id, reason, window_start, count)
       VALUES ($1, 'INVALID_API_KEY', '2026-03-01T10:01:00Z', 4)`,
      [id],
    );
    const hourly = await get(
      `${CLIENTS}/${id}/usage?step=hour&since=2026-03-01T10:20:00Z&until=2026-03-01T13:00:00Z`,
    );
    expect(hourly.status).toBe(200);
    expect(hourly.json).toEqual({
      id,
      step: 'hour',
      since: '2026-03-01T10:00:00.000Z',
      until: '2026-03-01T13:00:00.000Z',
      points: [
        { start: '2026-03-01T10:00:00.000Z', allowed: 12, limited: 1, failed: 4 },
        { start: '2026-03-01T11:00:00.000Z', allowed: 0, limited: 0, failed: 0 },
        { start: '2026-03-01T12:00:00.000Z', allowed: 3, limited: 2, failed: 0 },
      ],
    });
    const minutes = await get(
      `${CLIENTS}/${id}/usage?step=minute&since=2026-03-01T10:00:00%2B00:00&until=2026-03-01T10:03:00Z`,
    );
    expect((minutes.json as { points: unknown[] }).points).toEqual([
      { start: '2026-03-01T10:00:00.000Z', allowed: 5, limited: 1, failed: 0 },
      { start: '2026-03-01T10:01:00.000Z', allowed: 7, limited: 0, failed: 4 },
      { start: '2026-03-01T10:02:00.000Z', allowed: 0, limited: 0, failed: 0 },
    ]);
    // The default: the last 24 hours by hour, ending now.
    const recent = await get(`${CLIENTS}/${id}/usage`);
    expect(recent.status).toBe(200);
    expect(
      (recent.json as { step: string; points: unknown[] }).points.length,
    ).toBeGreaterThanOrEqual(24);
  });

  test.each([
    ['step=week', 'step'],
    ['since=yesterday', 'since'],
    ['until=2026-01-01', 'until'],
    ['since=2026-03-02T00:00:00Z&until=2026-03-01T00:00:00Z', 'since'],
    ['step=minute&since=2026-01-01T00:00:00Z&until=2026-03-01T00:00:00Z', 'since'],
    ['limit=5', 'limit'],
    ['step=hour&step=day', 'step'],
  ])('%s is a 400 naming %s', async (query, field) => {
    const id = await client();
    const res = await get(`${CLIENTS}/${id}/usage?${query}`);
    expect(res.status).toBe(400);
    const errors = (res.json as { errors: { field?: string; code: string }[] }).errors;
    expect(errors.map((e) => e.field)).toContain(field);
  });

  test('an unknown client is a 404, a bad id a 400, in the one error shape', async () => {
    const missing = await get(`${CLIENTS}/999999999/usage`);
    expect(missing.status).toBe(404);
    expect((missing.json as { errors: { code: string }[] }).errors[0]!.code).toBe('NOT_FOUND');
    expect((await get(`${CLIENTS}/abc/usage`)).status).toBe(400);
    const anonymous = await http(`${sidecar.url}${CLIENTS}/1/usage`);
    expect(anonymous.status).toBe(401);
  });
});

describe('retention', () => {
  test('rows past the retention are pruned in batches; newer rows stay', async () => {
    const id = await client();
    const now = Date.parse('2026-06-01T00:00:00Z');
    // 2,500 rows older than 30 days, 50 within them.
    await pool.query(
      `INSERT INTO api_client_usage (api_key_id, window_start, allowed)
       SELECT $1, $2::timestamptz - n * interval '1 minute', 1 FROM generate_series(1, 2500) AS n`,
      [id, new Date(now - 31 * 86_400_000)],
    );
    await pool.query(
      `INSERT INTO api_client_usage (api_key_id, window_start, allowed)
       SELECT $1, $2::timestamptz - n * interval '1 minute', 1 FROM generate_series(1, 50) AS n`,
      [id, new Date(now)],
    );
    const pruner = new UsagePruner(pool, silentLogger, 30, 3_600_000, () => now, 1000);
    // This client's 2,500, and any other test's rows of months ago.
    expect(await pruner.prune()).toBeGreaterThanOrEqual(2500);
    const old = await pool.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM api_client_usage WHERE window_start < $1',
      [new Date(now - 30 * 86_400_000)],
    );
    expect(old.rows[0]!.n).toBe(0);
    const { rows } = await pool.query<{ n: number; oldest: Date }>(
      'SELECT count(*)::int AS n, min(window_start) AS oldest FROM api_client_usage WHERE api_key_id = $1',
      [id],
    );
    expect(rows[0]!.n).toBe(50);
    expect(rows[0]!.oldest.getTime()).toBeGreaterThan(now - 30 * 86_400_000);
    expect(await pruner.prune()).toBe(0);
  });
});

describe('the recorder that writes what nginx counted', () => {
  /** One drain's worth of counts: `n` clients from row `first`, one minute, 2 allowed each. */
  const oneDrain = (first: number, n: number, at: number): UsageCount[] =>
    Array.from({ length: n }, (_, i) => ({ apiKeyId: first + i, at, allowed: 2, limited: 0 }));
  const written = async (first: number, n: number) => {
    const { rows } = await pool.query<{ rows: number; allowed: string }>(
      `SELECT count(*)::int AS rows, coalesce(sum(allowed), 0)::text AS allowed
       FROM api_client_usage WHERE api_key_id BETWEEN $1 AND $2`,
      [first, first + n - 1],
    );
    return rows[0];
  };

  test('a collection naming 150,000 clients is written whole (callers spread over many keys)', async () => {
    const first = 900_000_000;
    const at = Date.parse('2026-03-02T10:00:30Z');
    let drains = 0;
    const source = { drainUsage: async () => (drains++ === 0 ? oneDrain(first, 150_000, at) : []) };
    const recorder = new UsageRecorder(pool, source, silentLogger, 3_600_000);
    await recorder.flush();
    expect(await written(first, 150_000)).toEqual({ rows: 150_000, allowed: '300000' });
  }, 60_000);

  test('with the database away, the first maxEntries are kept for the next flush and the rest dropped', async () => {
    const first = 910_000_000;
    const at = Date.parse('2026-03-02T11:00:30Z');
    // Nothing listens on port 1: every query fails as with a database that is away.
    const away = new pg.Pool({ connectionString: 'postgres://nobody@127.0.0.1:1/none', max: 1 });
    let database: pg.Pool = away;
    const db: Queryable = {
      query: ((text: string, values?: unknown[]) =>
        database.query(text, values)) as Queryable['query'],
    };
    let drains = 0;
    const source = { drainUsage: async () => (drains++ === 0 ? oneDrain(first, 5_000, at) : []) };
    const recorder = new UsageRecorder(db, source, silentLogger, 3_600_000, 1_000);
    try {
      await recorder.flush();
      database = pool;
      await recorder.flush();
    } finally {
      await away.end();
    }
    expect(await written(first, 5_000)).toEqual({ rows: 1_000, allowed: '2000' });
  }, 60_000);
});
