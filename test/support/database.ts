import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { inject } from 'vitest';

/** Creates an empty database on the run's shared PostgreSQL and returns its URL. */
export async function freshDatabase(
  adminUrl: string = inject('postgresAdminUrl'),
): Promise<string> {
  const name = `t_${randomBytes(6).toString('hex')}`;
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    await client.query(`CREATE DATABASE ${name}`);
  } finally {
    await client.end();
  }
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

/**
 * Waits until every backend has reported its statistics (pg_stat_*): one that reported less
 * than a second before going idle keeps the rest for up to 10 s (PostgreSQL's
 * PGSTAT_IDLE_INTERVAL), so counts read sooner may miss statements already run, or show them
 * inside a window that began after them.
 */
export function statisticsReported(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 11_000));
}
