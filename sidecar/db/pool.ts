import pg from 'pg';
import type { Logger } from '../log.js';

// Return bigint columns (ids) as JS numbers; ids are kept below 2^53 by validation.
pg.types.setTypeParser(pg.types.builtins.INT8, (value) => Number(value));

export interface PoolOptions {
  max?: number;
  /**
   * Plan named statements once (`plan_cache_mode = force_generic_plan`). PostgreSQL otherwise
   * plans `= ANY($1)` look-ups afresh on every execution (their custom plans never lose to the
   * generic one): 80 µs of the database's time per /auth batch, for the same plan each time.
   */
  genericPlans?: boolean;
  /**
   * Connections not closed however long they are idle (opened on demand, as the others). A
   * connection made on demand costs a fork, a start-up and a password exchange (10 ms on the
   * bench VM): a gateway idle for the idle timeout would otherwise pay it on the next miss.
   */
  min?: number;
  /**
   * Commit without waiting for the WAL to reach the disk (`synchronous_commit = off`): for
   * writes that only record what later traffic records again (last use, counts). A crash of
   * PostgreSQL can lose the last fraction of a second of them, never corrupt or reorder them.
   */
  asyncCommit?: boolean;
}

/** A connection pool that never crashes the process when the database goes away. */
export function createPool(databaseUrl: string, log: Logger, options: PoolOptions = {}): pg.Pool {
  const settings = [
    ...(options.genericPlans ? ['-c plan_cache_mode=force_generic_plan'] : []),
    ...(options.asyncCommit ? ['-c synchronous_commit=off'] : []),
  ];
  const pool = new pg.Pool({
    connectionString: databaseUrl,
    max: options.max ?? 10,
    min: options.min ?? 0,
    // Fail fast while the database is down, so callers get a 503 instead of waiting.
    connectionTimeoutMillis: 3_000,
    idleTimeoutMillis: 30_000,
    query_timeout: 10_000,
    statement_timeout: 10_000,
    application_name: 'gateway-sidecar',
    ...(settings.length > 0 ? { options: settings.join(' ') } : {}),
  });
  // An idle client losing its connection emits here; without a listener it would be thrown.
  pool.on('error', (err) => log.warn('database connection lost', { error: err.message }));
  return pool;
}

/** True when the error means "the database cannot be reached", not "the query was wrong". */
export function isConnectionError(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string') {
    // 08xxx connection exceptions, 57P0x admin shutdown / cannot connect now, 53300 too many connections.
    if (/^(08|57P0)/.test(code) || code === '53300') return true;
    if (
      ['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN'].includes(code)
    ) {
      return true;
    }
  }
  return /timeout|terminat|Connection|connect/i.test(err.message);
}
