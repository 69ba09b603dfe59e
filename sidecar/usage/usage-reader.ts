import type { Queryable } from '../db/queryable.js';
import { USAGE_STEPS, type UsageQuery } from './usage-query.js';

/** One point of a usage series. */
export interface UsagePoint {
  start: string;
  allowed: number;
  limited: number;
  failed: number;
}

interface Bucket {
  b: string;
  allowed: string;
  limited: string;
  failed: string;
}

/**
 * A client's series: requests allowed and refused by its rate limit (api_client_usage), and
 * failed authentications naming it (auth_failures), summed per step, every step present (zero
 * where nothing was counted). Both tables are read by (client, time) indexes.
 */
export async function readUsage(
  db: Queryable,
  apiKeyId: number,
  query: UsageQuery,
): Promise<UsagePoint[]> {
  const size = USAGE_STEPS[query.step];
  const stepSeconds = size / 1000;
  const { rows } = await db.query<Bucket>(
    `WITH counted AS (
       SELECT window_start, allowed, limited, 0::bigint AS failed FROM api_client_usage
        WHERE api_key_id = $1 AND window_start >= $2 AND window_start < $3
       UNION ALL
       SELECT window_start, 0, 0, count FROM auth_failures
        WHERE api_key_id = $1 AND window_start >= $2 AND window_start < $3)
     SELECT floor(extract(epoch FROM window_start) / $4)::bigint::text AS b,
            sum(allowed)::text AS allowed, sum(limited)::text AS limited, sum(failed)::text AS failed
       FROM counted GROUP BY 1`,
    [apiKeyId, query.since, query.until, stepSeconds],
  );
  const byBucket = new Map(rows.map((r) => [Number(r.b) * size, r]));
  const points: UsagePoint[] = [];
  for (let t = query.since.getTime(); t < query.until.getTime(); t += size) {
    const r = byBucket.get(t);
    points.push({
      start: new Date(t).toISOString(),
      allowed: Number(r?.allowed ?? 0),
      limited: Number(r?.limited ?? 0),
      failed: Number(r?.failed ?? 0),
    });
  }
  return points;
}
