import { cp, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type pg from 'pg';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { migrate, NO_TRANSACTION } from '../../../sidecar/db/migrate.js';
import { createPool } from '../../../sidecar/db/pool.js';
import { silentLogger } from '../../../sidecar/log.js';
import { freshDatabase } from '../../support/database.js';

const REAL = join(import.meta.dirname, '../../../sidecar/db/migrations');
let dir: string;
let pool: pg.Pool;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'migrations-'));
  await cp(REAL, dir, { recursive: true });
  pool = createPool(await freshDatabase(), silentLogger);
  await migrate(pool, silentLogger, dir);
  await pool.query(
    `INSERT INTO api_clients (name, is_admin, api_client_id)
     SELECT 'm-' || g, false, 's-' || g FROM generate_series(1, 50000) AS g`,
  );
});
afterAll(async () => {
  await pool?.end();
  await rm(dir, { recursive: true, force: true });
});

test('a no-transaction migration builds an index CONCURRENTLY on a filled table, once', async () => {
  await writeFile(
    join(dir, '9001_concurrent_index.sql'),
    `${NO_TRANSACTION}\nCREATE INDEX CONCURRENTLY IF NOT EXISTS api_clients_created_at ON api_clients (created_at);\n`,
  );
  // Writes go on while it builds: CONCURRENTLY takes no lock that blocks an INSERT.
  const [applied] = await Promise.all([
    migrate(pool, silentLogger, dir),
    pool.query(
      "INSERT INTO api_clients (name, is_admin, api_client_id) VALUES ('during', false, 'during')",
    ),
  ]);
  expect(applied).toEqual(['9001_concurrent_index.sql']);
  const { rows } = await pool.query<{ valid: boolean }>(
    `SELECT i.indisvalid AS valid FROM pg_index i
     WHERE i.indexrelid = 'api_clients_created_at'::regclass`,
  );
  expect(rows).toEqual([{ valid: true }]);
  expect(await migrate(pool, silentLogger, dir)).toEqual([]);
  // The pool's own statement timeout is back on the connection the migration used.
  const timeouts = await Promise.all(
    Array.from({ length: 3 }, () =>
      pool.query<{ statement_timeout: string }>('SHOW statement_timeout'),
    ),
  );
  for (const t of timeouts) expect(t.rows[0]?.statement_timeout).toBe('10s');
});

test('the same statement in an ordinary (transactional) migration is refused by PostgreSQL', async () => {
  await writeFile(
    join(dir, '9002_in_a_transaction.sql'),
    'CREATE INDEX CONCURRENTLY IF NOT EXISTS api_clients_x ON api_clients (is_admin);\n',
  );
  await expect(migrate(pool, silentLogger, dir)).rejects.toThrow(/transaction block/);
  await rm(join(dir, '9002_in_a_transaction.sql'));
});
