import pg from 'pg';

/**
 * Tops the table up to `size` clients (every row counts, not only the filled ones, so "10^5
 * clients" is what a list-all returns) in one INSERT ... SELECT over generate_series: names
 * `scale-<n>` (zero-padded, so name order is n order, numbered on from the last fill), every
 * other one with an api_client_id, the rest with a key hash (no secret exists for them: they
 * are never presented). Then ANALYZE, as autovacuum would after such a load, so the planner
 * (and `total`'s estimate) see the table. Returns the seconds the fill took.
 */
export async function fillTo(databaseUrl: string, size: number): Promise<number> {
  const db = new pg.Client({ connectionString: databaseUrl });
  await db.connect();
  try {
    const started = performance.now();
    const { rows } = await db.query<{ scale: number; total: number }>(
      "SELECT count(*) FILTER (WHERE name LIKE 'scale-%')::int AS scale, count(*)::int AS total FROM api_clients",
    );
    const scale = rows[0]?.scale ?? 0;
    const missing = size - (rows[0]?.total ?? 0);
    if (missing > 0) {
      await db.query(
        `INSERT INTO api_clients (name, is_admin, api_client_id, key_hash)
         SELECT 'scale-' || lpad(g::text, 7, '0'), false,
                CASE WHEN g % 2 = 0 THEN 'scale-subject-' || g END,
                CASE WHEN g % 2 = 1 THEN sha256(g::text::bytea) END
         FROM generate_series($1::int, $2::int) AS g`,
        [scale + 1, scale + missing],
      );
    }
    await db.query('ANALYZE api_clients');
    return (performance.now() - started) / 1000;
  } finally {
    await db.end();
  }
}
