import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { packageRoot } from '../../../common/package-root.js';
import { freePort } from '../../../native/ports.js';
import { silentLogger } from '../../../sidecar/log.js';
import { type RunningSidecar, startSidecar } from '../../../sidecar/sidecar.js';
import { freshDatabase } from '../../support/database.js';
import { http } from '../../support/http.js';
import { startProcess } from '../../support/process.js';

let databaseUrl: string;
let sidecar: RunningSidecar;
let metricsUrl: string;

beforeAll(async () => {
  databaseUrl = await freshDatabase();
  sidecar = await startSidecar(
    {
      databaseUrl,
      listen: { host: '127.0.0.1', port: 0 },
      metricsListen: { host: '127.0.0.1', port: 0 },
    },
    { log: silentLogger, env: {}, print: () => {} },
  );
  metricsUrl = sidecar.metricsUrl!;
}, 60_000);
afterAll(async () => {
  await sidecar?.close();
});

async function withDatabase<T>(run: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    return await run(client);
  } finally {
    await client.end();
  }
}

test('/livez and /readyz answer 200 once the database is reachable and migrated', async () => {
  const live = await http(`${metricsUrl}/livez`);
  expect(live.status).toBe(200);
  expect(live.json).toEqual({ status: 'live' });
  const ready = await http(`${metricsUrl}/readyz`);
  expect(ready.status).toBe(200);
  expect(ready.json).toEqual({ status: 'ready' });
});

test('/readyz answers 503 naming a migration the database has not recorded', async () => {
  const version = '0003_api_client_changes.sql';
  await withDatabase((c) => c.query('DELETE FROM schema_migrations WHERE version = $1', [version]));
  try {
    const res = await http(`${metricsUrl}/readyz`);
    expect(res.status).toBe(503);
    expect(res.headers['content-type']).toBe('application/json');
    expect(res.json).toEqual({
      errors: [{ code: 'MIGRATIONS_PENDING', message: expect.stringContaining(version) }],
    });
    // Alive all the same: an orchestrator must not restart it for that.
    expect((await http(`${metricsUrl}/livez`)).status).toBe(200);
  } finally {
    await withDatabase((c) =>
      c.query('INSERT INTO schema_migrations (version) VALUES ($1)', [version]),
    );
  }
  expect((await http(`${metricsUrl}/readyz`)).status).toBe(200);
});

test('/metrics is Prometheus text with the pools and query times; other paths and methods are JSON errors', async () => {
  const res = await http(`${metricsUrl}/metrics`);
  expect(res.status).toBe(200);
  expect(res.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
  expect(res.text).toMatch(/^gateway_db_pool_connections\{pool="auth",state="total"\} \d+$/m);
  expect(res.text).toMatch(/^gateway_db_pool_connections\{pool="management",state="idle"\} \d+$/m);
  expect(res.text).toMatch(/^gateway_db_pool_waiting\{pool="auth"\} 0$/m);
  // The migrations and the readiness checks above ran queries on the auth pool.
  const count = /^gateway_db_query_duration_seconds_count\{pool="auth"\} (\d+)$/m.exec(res.text);
  expect(Number(count?.[1])).toBeGreaterThan(0);
  // No nginx control socket configured: no nginx counters.
  expect(res.text).not.toContain('gateway_nginx_');

  const missing = await http(`${metricsUrl}/nope`);
  expect(missing.status).toBe(404);
  expect(missing.json).toEqual({ errors: [expect.objectContaining({ code: 'NOT_FOUND' })] });
  const post = await http(`${metricsUrl}/metrics`, { method: 'POST' });
  expect(post.status).toBe(405);
  expect(post.headers.allow).toBe('GET, HEAD');
});

test('a sidecar whose database cannot be reached is live but not ready, and stops on SIGTERM', async () => {
  const metricsPort = await freePort();
  const databasePort = await freePort();
  const child = startProcess(process.execPath, [join(packageRoot(), 'dist/sidecar/main.js')], {
    PATH: process.env.PATH,
    DATABASE_URL: `postgres://nobody:nothing@127.0.0.1:${databasePort}/none`,
    PORT: '0',
    METRICS_LISTEN: `127.0.0.1:${metricsPort}`,
  });
  try {
    await child.waitFor(/"message":"metrics listening"/, 20_000);
    const url = `http://127.0.0.1:${metricsPort}`;
    expect((await http(`${url}/livez`)).status).toBe(200);
    const ready = await http(`${url}/readyz`);
    expect(ready.status).toBe(503);
    expect(ready.json).toEqual({
      errors: [{ code: 'DATABASE_UNREACHABLE', message: expect.any(String) }],
    });
  } finally {
    expect(await child.stop('SIGTERM')).toBe(0);
  }
});

test('a bad METRICS_LISTEN or LOG_LEVEL stops the start with both reasons, as one JSON line', async () => {
  const child = startProcess(process.execPath, [join(packageRoot(), 'dist/sidecar/main.js')], {
    PATH: process.env.PATH,
    DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none',
    METRICS_LISTEN: 'everywhere',
    LOG_LEVEL: 'chatty',
  });
  const code = await new Promise<number | null>((resolve) => child.child.on('close', resolve));
  expect(code).toBe(1);
  const line = JSON.parse(child.stderr().trim().split('\n').at(-1)!) as Record<string, string>;
  expect(line).toMatchObject({ level: 'error', message: 'sidecar failed to start' });
  expect(line.error).toContain('METRICS_LISTEN');
  expect(line.error).toContain('LOG_LEVEL');
  expect(child.stdout()).toBe('');
});
