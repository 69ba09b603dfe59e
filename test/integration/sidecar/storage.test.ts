import pg from 'pg';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { migrate } from '../../../sidecar/db/migrate.js';
import { createPool } from '../../../sidecar/db/pool.js';
import { silentLogger } from '../../../sidecar/log.js';
import { freshDatabase } from '../../support/database.js';
import { http } from '../../support/http.js';
import { createClient } from '../../support/management.js';
import { startTestSidecar, type TestSidecar } from '../../support/sidecar.js';

let db: string;
let sidecar: TestSidecar;

beforeAll(async () => {
  db = await freshDatabase();
});
afterAll(() => sidecar?.close());

test('eight sidecars migrating one empty database at once apply each migration exactly once', async () => {
  const pools = Array.from({ length: 8 }, () => createPool(db, silentLogger));
  const applied = await Promise.all(pools.map((pool) => migrate(pool, silentLogger)));
  await Promise.all(pools.map((pool) => pool.end()));
  const all = applied.flat();
  expect(all.length).toBeGreaterThan(0);
  expect(new Set(all).size).toBe(all.length);
  const client = new pg.Client({ connectionString: db });
  await client.connect();
  const { rows } = await client.query('SELECT version FROM schema_migrations ORDER BY version');
  await client.end();
  expect(rows.map((r) => r.version)).toEqual([...new Set(all)].sort());
});

test('the table holds no key secret: only 32-byte SHA-256 hashes', async () => {
  sidecar = await startTestSidecar(db);
  const tokens = [sidecar.adminKey];
  for (let i = 0; i < 5; i += 1) {
    tokens.push(
      (
        await createClient(sidecar.url, sidecar.adminKey, {
          name: `k${i}`,
          is_admin: i % 2 === 0,
          generate_api_key: true,
        })
      ).token,
    );
  }
  // Use every key once so nothing is only in a cold path.
  for (const t of tokens)
    expect(
      (await http(`${sidecar.url}/auth`, { headers: { Authorization: `apk ${t}` } })).status,
    ).toBe(204);

  const client = new pg.Client({ connectionString: db });
  await client.connect();
  const { rows } = await client.query('SELECT * FROM api_clients');
  const dump = (await client.query("SELECT string_agg(t::text, E'\\n') AS all FROM api_clients t"))
    .rows[0].all as string;
  await client.end();
  expect(rows.length).toBe(tokens.length);
  for (const token of tokens) {
    const secret = token.split('.')[1]!;
    expect(dump).not.toContain(secret);
    expect(dump).not.toContain(Buffer.from(secret, 'base64url').toString('hex'));
    for (const row of rows)
      for (const value of Object.values(row)) expect(String(value)).not.toContain(secret);
  }
  for (const row of rows) expect((row.key_hash as Buffer).length).toBe(32);
});
