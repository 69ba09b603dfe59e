import pg from 'pg';

/**
 * Tops the table up to `size` clients in one INSERT ... SELECT over generate_series: names
 * `scale-<n>` (zero-padded, so name order is n order), every other one with an api_client_id,
 * the rest with a key hash (no secret exists for them: they are never presented). Then ANALYZE,
 * as autovacuum would after such a load, so the planner (and `total`'s estimate) see the table.
 * Returns the seconds the fill took.
 */
export async function fillTo(databaseUrl: string, size: number): Promise<number> {
  const db = new pg.Client({ connectionString: databaseUrl });
  await db.connect();
  try {
    const started = performance.now();
    const { rows } = await db.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM api_clients WHERE name LIKE 'scale-%'",
    );
    const from = (rows[0]?.n ?? 0) + 1;
    if (from <= size) {
      await db.query(
        `INSERT INTO api_clients (name, is_admin, api_client_id, key_hash)
         SELECT 'scale-' || lpad(g::text, 7, '0'), false,
                CASE WHEN g % 2 = 0 THEN 'scale-subject-' || g END,
                CASE WHEN g % 2 = 1 THEN sha256(g::text::bytea) END
         FROM generate_series($1::int, $2::int) AS g`,
        [from, size],
      );
    }
    await db.query('ANALYZE api_clients');
    return (performance.now() - started) / 1000;
  } finally {
    await db.end();
  }
}
