import type pg from 'pg';
import { pendingMigrations } from '../db/migrate.js';

/** Ready, or why not: an error code and message in the one error shape's terms. */
export type Readiness =
  | {
      ready: true;
      degraded?: { code: string; message: string };
      /** With rate_limits.store redis: how the store fares, beside the answer. */
      rateLimitStore?: RateLimitStoreReport;
    }
  | { ready: false; code: string; message: string };

/** rate_limits.store redis, as readiness reports it (the same figures as /metrics). */
export interface RateLimitStoreReport {
  /** Whether the last sync with Redis worked; null: none tried yet. */
  up: boolean | null;
  /** Seconds since the last sync that worked; -1: none yet. */
  syncLagSeconds: number;
  /** Requests the fleet admitted over their limits, seen since this sidecar started. */
  overAdmitted: number;
}

const TIMEOUT_MS = 2_000;

/**
 * Ready means the database answers and every migration this code ships is applied: a sidecar
 * that would answer every request with 503 (or query tables that do not exist yet) is not.
 * A check that takes longer than 2 s counts as unreachable (probes time out, not hang).
 */
export async function checkReadiness(pool: pg.Pool, migrationsDir?: string): Promise<Readiness> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${TIMEOUT_MS} ms`)), TIMEOUT_MS);
  });
  try {
    const pending = await Promise.race([pendingMigrations(pool, migrationsDir), timeout]);
    if (pending.length === 0) return { ready: true };
    return {
      ready: false,
      code: 'MIGRATIONS_PENDING',
      message: `Database migrations not applied yet: ${pending.join(', ')}.`,
    };
  } catch (err) {
    return {
      ready: false,
      code: 'DATABASE_UNREACHABLE',
      message: `The database cannot be reached: ${(err as Error).message}`,
    };
  } finally {
    clearTimeout(timer);
  }
}
