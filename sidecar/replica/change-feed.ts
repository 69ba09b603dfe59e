import type { Permissions } from '../../common/permissions.js';
import { rateLimitOf } from '../clients/client-rows.js';
import type { Queryable } from '../db/queryable.js';
import type { KeyTableRow } from './key-record-bytes.js';

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

const RECORD_COLUMNS = `id, name, is_admin, key_hash, expires_at, previous_key_hash,
  previous_key_expires_at, rate_limit_requests, rate_limit_per_seconds, permissions`;

interface RecordRow {
  id: number;
  name: string;
  is_admin: boolean;
  key_hash: Buffer | null;
  expires_at: Date | null;
  previous_key_hash: Buffer | null;
  previous_key_expires_at: Date | null;
  rate_limit_requests: number | null;
  rate_limit_per_seconds: number | null;
  permissions: Permissions;
}

function fromRecordRow(row: RecordRow): KeyTableRow {
  return {
    id: row.id,
    name: row.name,
    isAdmin: row.is_admin,
    keyHash: row.key_hash,
    expiresAt: row.expires_at,
    previousKeyHash: row.previous_key_hash,
    previousKeyExpiresAt: row.previous_key_expires_at,
    rateLimit: rateLimitOf(row),
    permissions: row.permissions,
  };
}

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
   * after them; null when those changes are no longer all in the feed (pruned).
   */
  async changedSince(position: number): Promise<{ rows: number[]; head: FeedHead } | null> {
    const head = await this.head();
    if (position < head.prunedThrough) return null;
    const { rows } = await this.db.query<{ client_row: number }>(
      'SELECT DISTINCT client_row FROM api_client_feed WHERE position > $1 AND position <= $2',
      [Math.max(0, position - CATCH_UP_MARGIN), head.position],
    );
    return { rows: rows.map((r) => r.client_row), head };
  }

  /** The records of the clients `ids` that exist (a deleted one is absent). */
  async records(ids: readonly number[]): Promise<KeyTableRow[]> {
    if (ids.length === 0) return [];
    const { rows } = await this.db.query<RecordRow>(
      `SELECT ${RECORD_COLUMNS} FROM api_clients WHERE id = ANY($1::bigint[])`,
      [ids],
    );
    return rows.map(fromRecordRow);
  }

  /** Every client's record, `size` at a time, in id order (keyset batches, short queries). */
  async *all(size: number): AsyncGenerator<KeyTableRow[]> {
    let after = 0;
    for (;;) {
      const { rows } = await this.db.query<RecordRow>(
        `SELECT ${RECORD_COLUMNS} FROM api_clients WHERE id > $1 ORDER BY id LIMIT $2`,
        [after, size],
      );
      if (rows.length === 0) return;
      yield rows.map(fromRecordRow);
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
