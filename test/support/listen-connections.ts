import pg from 'pg';
import { expect } from 'vitest';

/**
 * Terminates every sidecar's LISTEN connection to the database at `databaseUrl`
 * (pg_terminate_backend), as a network cut or a database failover would, and checks that
 * `expected` were cut.
 */
export async function cutListenConnections(databaseUrl: string, expected: number): Promise<void> {
  const admin = new pg.Client({ connectionString: databaseUrl });
  await admin.connect();
  try {
    const cut = await admin.query(
      "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'gateway-sidecar-listen' AND datname = current_database()",
    );
    expect(cut.rowCount).toBe(expected);
  } finally {
    await admin.end();
  }
}
