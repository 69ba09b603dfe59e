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

/**
 * Applies the ordered SQL migrations that this database has not seen, each in its own
 * transaction, under a session advisory lock: sidecars starting together on one database
 * take turns, and the later ones find nothing left to do.
 */
export async function migrate(pool: pg.Pool, log: Logger): Promise<string[]> {
  const dir = migrationsDir();
  const files = (await readdir(dir)).filter((f) => /^\d{4}_[a-z0-9_]+\.sql$/.test(f)).sort();
  const client = await pool.connect();
  const applied: string[] = [];
  try {
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
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
    }
  } finally {
    client.release();
  }
  return applied;
}
