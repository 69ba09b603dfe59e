import type { ApiClientRow } from '../clients/store/api-client.js';
import { COLUMNS, type DbRow, fromDb } from '../clients/store/rows.js';
import type { Queryable } from '../db/queryable.js';

/**
 * A place in the change feed (migration 0011): the database's epoch and a position. Written
 * `<epoch>:<position>` where nginx keeps it.
 */
export interface FeedPosition {
  epoch: string;
  position: number;
}

/** The feed as it stands: where it is, and the last position pruned from it. */
export interface FeedHead extends FeedPosition {
  prunedThrough: number;
}

export function formatPosition(p: FeedPosition): string {
  return `${p.epoch}:${p.position}`;
}

/** Pure: `<epoch>:<position>` as nginx keeps it, or null for anything else. */
export function parsePosition(text: unknown): FeedPosition | null {
  if (typeof text !== 'string') return null;
  const match = /^([0-9a-f]{1,64}):(0|[1-9][0-9]{0,15})$/.exec(text);
  if (!match) return null;
  const position = Number(match[2]);
  return Number.isSafeInteger(position) ? { epoch: match[1]!, position } : null;
}

/**
 * Positions come from a sequence, so a change may commit after one with a later position: a
 * catch-up re-reads this many positions before its own. Its changes are idempotent (each is
 * the row's current state), so reading one twice costs only the read.
 */
export const CATCH_UP_MARGIN = 1_000;

/** The change feed and the key records it is about, read from PostgreSQL. */
export class ChangeFeed {
  constructor(private readonly db: Queryable) {}

  /** Where the feed stands now. */
  async head(): Promise<FeedHead> {
    const { rows } = await this.db.query<{
      epoch: string;
      pruned_through: number;
      position: number | null;
    }>(
      `SELECT epoch, pruned_through, (SELECT max(position) FROM api_client_feed) AS position
         FROM api_client_feed_epoch`,
    );
    const row = rows[0];
    if (!row) throw new Error('the change feed has no epoch (migration 0011 missing)');
    return {
      epoch: row.epoch,
      position: Math.max(row.position ?? 0, row.pruned_through),
      prunedThrough: row.pruned_through,
    };
  }

  /**
   * The client rows changed after `position` (less CATCH_UP_MARGIN), and the feed's position
   * after them; null when those changes are no longer all in the feed (pruned), or when the
   * feed is behind `position`: the database was restored from a backup taken after it (same
   * epoch, older rows), so what nginx holds may name clients it no longer has. Its head never
   * goes back otherwise (pruning raises `pruned_through` past what it removes).
   */
  async changedSince(position: number): Promise<{ rows: number[]; head: FeedHead } | null> {
    const head = await this.head();
    if (position < head.prunedThrough || position > head.position) return null;
    return { rows: await this.changedThrough(position, head.position), head };
  }

  /**
   * The client rows changed after `position` (less `margin`) up to `through` (a head a
   * heartbeat saw): what a replica at `position` must hold to be at `through`.
   */
  async changedThrough(
    position: number,
    through: number,
    margin = CATCH_UP_MARGIN,
  ): Promise<number[]> {
    const { rows } = await this.db.query<{ client_row: number }>(
      'SELECT DISTINCT client_row FROM api_client_feed WHERE position > $1 AND position <= $2',
      [Math.max(0, position - margin), through],
    );
    return rows.map((r) => r.client_row);
  }

  /**
   * The rows of the clients `ids` that exist (a deleted one is absent). Whole rows, as the
   * directory reads them (clients/store/rows.ts): nginx's record is made of some of their columns, the
   * sidecar's mirror of clients (client-mirror.ts) keeps all of them.
   */
  async records(ids: readonly number[]): Promise<ApiClientRow[]> {
    if (ids.length === 0) return [];
    const { rows } = await this.db.query<DbRow>(
      `SELECT ${COLUMNS} FROM api_clients WHERE id = ANY($1::bigint[])`,
      [ids],
    );
    return rows.map(fromDb);
  }

  /** Every client's row, `size` at a time, in id order (keyset batches, short queries). */
  async *all(size: number): AsyncGenerator<ApiClientRow[]> {
    let after = 0;
    for (;;) {
      const { rows } = await this.db.query<DbRow>(
        `SELECT ${COLUMNS} FROM api_clients WHERE id > $1 ORDER BY id LIMIT $2`,
        [after, size],
      );
      if (rows.length === 0) return;
      yield rows.map(fromDb);
      if (rows.length < size) return;
      after = rows[rows.length - 1]!.id;
    }
  }

  /**
   * Deletes changes older than `seconds` (every pair has caught up long before), noting the
   * last position pruned: a replica older than it is loaded again. The number deleted.
   */
  async prune(seconds: number): Promise<number> {
    const { rows } = await this.db.query<{ n: number }>(
      `WITH gone AS (
         DELETE FROM api_client_feed WHERE changed_at < now() - make_interval(secs => $1)
         RETURNING position
       ), noted AS (
         UPDATE api_client_feed_epoch
            SET pruned_through = GREATEST(pruned_through, (SELECT max(position) FROM gone))
          WHERE EXISTS (SELECT 1 FROM gone)
       )
       SELECT count(*)::int AS n FROM gone`,
      [seconds],
    );
    return rows[0]?.n ?? 0;
  }
}
