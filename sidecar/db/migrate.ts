import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type pg from 'pg';
import { packageRoot } from '../../common/package-root.js';
import type { Logger } from '../log.js';

/** Arbitrary constant: the key of the advisory lock that serialises migrations. */
const MIGRATION_LOCK_KEY = 4_237_001;

/** The SQL files live in the source tree, also when the code runs from dist/. */
function migrationsDir(): string {
  return join(packageRoot(), 'sidecar', 'db', 'migrations');
}

/** The migration files this code ships, in the order they apply. */
export async function migrationFiles(dir: string = migrationsDir()): Promise<string[]> {
  return (await readdir(dir)).filter((f) => /^\d{4}_[a-z0-9_]+\.sql$/.test(f)).sort();
}

/** The shipped migrations this database has not recorded (all of them before the first run). */
export async function pendingMigrations(
  pool: pg.Pool,
  dir: string = migrationsDir(),
): Promise<string[]> {
  const files = await migrationFiles(dir);
  const table = await pool.query<{ exists: boolean }>(
    "SELECT to_regclass('schema_migrations') IS NOT NULL AS exists",
  );
  if (!table.rows[0]?.exists) return files;
  const done = new Set(
    (await pool.query<{ version: string }>('SELECT version FROM schema_migrations')).rows.map(
      (r) => r.version,
    ),
  );
  return files.filter((f) => !done.has(f));
}

/**
 * First line of a migration that must run outside a transaction: `CREATE INDEX CONCURRENTLY`,
 * which builds an index on a large table without blocking writes. Such a file holds exactly one
 * statement (PostgreSQL runs several in one query as a transaction), and should be written to
 * be run again (`IF NOT EXISTS`), since it is recorded only after it succeeded.
 */
export const NO_TRANSACTION = '-- migrate: no transaction';

/**
 * How long a migration waits for a lock before failing (and the start-up retrying it): a
 * migration queued behind a long query for an exclusive lock would otherwise hold up every
 * query that comes after it, /auth's included.
 */
const LOCK_TIMEOUT = '5s';

/**
 * Applies the ordered SQL migrations that this database has not seen, each in its own
 * transaction (or none, for NO_TRANSACTION files), under a session advisory lock: sidecars
 * starting together on one database take turns, and the later ones find nothing left to do.
 * The pool's 10 s statement timeout is lifted: building an index on a million rows may take
 * longer, and that is not a fault.
 */
export async function migrate(
  pool: pg.Pool,
  log: Logger,
  dir: string = migrationsDir(),
): Promise<string[]> {
  const files = await migrationFiles(dir);
  const client = await pool.connect();
  const applied: string[] = [];
  try {
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
    await client.query(`SET statement_timeout = 0; SET lock_timeout = '${LOCK_TIMEOUT}'`);
    try {
      await client.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
        version    text PRIMARY KEY,
        applied_at timestamptz NOT NULL DEFAULT now()
      )`);
      const done = new Set(
        (await client.query<{ version: string }>('SELECT version FROM schema_migrations')).rows.map(
          (r) => r.version,
        ),
      );
      for (const file of files) {
        if (done.has(file)) continue;
        const sql = await readFile(join(dir, file), 'utf8');
        if (sql.startsWith(NO_TRANSACTION)) {
          await client.query(sql);
          await client.query('INSERT INTO schema_migrations (version) VALUES ($1)', [file]);
          applied.push(file);
          log.info('migration applied', { version: file, transaction: false });
          continue;
        }
        await client.query('BEGIN');
        try {
          await client.query(sql);
          await client.query('INSERT INTO schema_migrations (version) VALUES ($1)', [file]);
          await client.query('COMMIT');
        } catch (err) {
          await client.query('ROLLBACK');
          throw err;
        }
        applied.push(file);
        log.info('migration applied', { version: file });
      }
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]);
      // The connection goes back to the pool: with the pool's own timeouts.
      await client.query('RESET statement_timeout; RESET lock_timeout');
    }
  } finally {
    client.release();
  }
  return applied;
}
