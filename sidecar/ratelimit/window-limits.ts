import type { Queryable } from '../db/queryable.js';
import type { RowLimit } from './over-admission.js';

/**
 * The rate limits of clients `rows` (the rows of the windows a sync saw), with each one's last
 * change in the feed since `sinceS` (Unix s, the earliest start of those windows): one query,
 * by api_clients' key and the feed's changed_at index (the feed since then read once, not once
 * a client). The creation is not a change (no limit came before it): its feed row has the
 * creation's own time, `now()` of the same transaction. A deleted client is absent.
 */
export async function readRowLimits(
  db: Queryable,
  rows: readonly string[],
  sinceS: number,
): Promise<Map<string, RowLimit>> {
  const out = new Map<string, RowLimit>();
  if (rows.length === 0) return out;
  const { rows: found } = await db.query<{
    id: number;
    rate_limit_requests: number | null;
    rate_limit_per_seconds: number | null;
    changed_s: number | null;
  }>(
    `SELECT c.id, c.rate_limit_requests, c.rate_limit_per_seconds,
            extract(epoch FROM max(f.changed_at))::float8 AS changed_s
       FROM api_clients c
       LEFT JOIN api_client_feed f
         ON f.client_row = c.id AND f.changed_at >= to_timestamp($2::float8)
        AND f.changed_at > c.created_at
      WHERE c.id = ANY($1::bigint[])
      GROUP BY c.id`,
    [rows, sinceS],
  );
  for (const r of found) {
    out.set(String(r.id), {
      requests: r.rate_limit_requests,
      perSeconds: r.rate_limit_per_seconds,
      changedS: r.changed_s,
    });
  }
  return out;
}
