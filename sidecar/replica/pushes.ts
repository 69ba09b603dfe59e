import type { Logger } from '../log.js';
import type { DecisionInvalidator } from '../nginx/invalidator.js';
import type { KeyTableChange, NginxKeyTable } from '../nginx/key-table.js';
import { type ChangeFeed, type FeedPosition, formatPosition } from './change-feed.js';
import { DOUBT_RECORD, GONE_RECORD, type KeyTableRow, keyRecordBytes } from './key-record-bytes.js';
import type { ReplicaState } from './replica-state.js';

/** A client's row as the change nginx's replica takes: its record's bytes. */
export function change(row: KeyTableRow): KeyTableChange {
  return { id: row.id, record: keyRecordBytes(row) };
}

/**
 * What the replicator sends nginx about single clients: their records as they are now (push),
 * or that what it holds of them is in doubt until read. The load and the following of the feed
 * (load.ts, follow.ts) both push through here.
 */
export class ReplicaPushes {
  constructor(
    private readonly state: ReplicaState,
    private readonly feed: ChangeFeed,
    private readonly nginx: NginxKeyTable,
    /** nginx's decision markers (the control socket's /invalidate and friends). */
    private readonly markers: DecisionInvalidator,
    private readonly log: Logger,
    private readonly batchSize: number,
  ) {}

  /**
   * The records of `ids` as they are now (absent: deleted, GONE_RECORD) into nginx, and the
   * position `head` (a load's or a catch-up's; null for notified changes, which never move it:
   * only a heartbeat or a catch-up does).
   */
  async push(
    ids: readonly number[],
    head: FeedPosition | null,
    complete: boolean,
  ): Promise<boolean> {
    const s = this.state;
    const since = s.mirror.reading();
    const doubtsBefore = s.doubts;
    const rows = await this.feed.records(ids);
    const found = new Map(rows.map((row) => [row.id, row]));
    s.mirror.put(rows, since);
    s.mirror.gone(
      ids.filter((id) => !found.has(id)),
      since,
    );
    const changes: KeyTableChange[] = ids.map((id) => {
      const row = found.get(id);
      return row ? change(row) : { id, record: GONE_RECORD };
    });
    for (let i = 0; i < changes.length || (i === 0 && complete); i += this.batchSize) {
      const last = i + this.batchSize >= changes.length;
      const done = complete && last;
      const answer = await this.nginx.apply(
        this.notDoubtedSince(changes.slice(i, i + this.batchSize), doubtsBefore),
        head ? formatPosition(head) : null,
        // A load just read every row: trusted, and live as the last heartbeat left it.
        done ? { complete: true, renew: true, liveS: s.liveLeft() } : {},
      );
      if (!s.handle(answer, 'apply')) return false;
    }
    if (complete || s.phase === 'complete') {
      s.phase = 'complete';
      if (head) s.position = head;
    }
    return true;
  }

  /** A push of changed clients (not a load's); rows that cannot be read leave them in doubt. */
  async pushOrDoubt(ids: readonly number[], head: FeedPosition | null): Promise<void> {
    try {
      await this.push(ids, head, false);
    } catch (err) {
      await this.doubt(ids);
      throw err;
    }
  }

  /**
   * The rows of `ids` could not be read: nginx drops what it holds of them and asks about them
   * (never the old record, never "nobody's"), and the replica catches up from its position.
   */
  async doubt(ids: readonly number[]): Promise<void> {
    this.state.unapplied = true;
    this.log.warn('a change could not be read; its clients are asked about until caught up', {
      clients: ids.length,
    });
    await this.inDoubt(ids);
  }

  /**
   * nginx stops using what it holds of `ids` (DOUBT_RECORD) and withdraws its liveness (an id
   * it does not hold is asked about). An nginx that cannot be told holds what it should not
   * use: it is loaded again.
   */
  async inDoubt(ids: readonly number[]): Promise<void> {
    const s = this.state;
    s.doubts += 1;
    for (const id of ids) s.doubtedAt.set(id, s.doubts);
    const answer = await this.nginx.apply(
      ids.map((id) => ({ id, record: DOUBT_RECORD })),
      null,
      { liveS: 0 },
    );
    if (answer.kind === 'state' || ids.length === 0) return;
    s.handle(answer, 'doubt');
    if (s.phase !== 'off') {
      s.phase = 'unknown';
      s.position = null;
    }
  }

  /** Clients `ids` changed while nobody listened: their rows held, then nginx's decisions. */
  async invalidate(ids: readonly number[]): Promise<void> {
    this.state.mirror.drop(ids);
    await this.markers.clients(ids);
  }

  /**
   * `changes` but for the ids put in doubt after `doubts` (a notice of a change that may have
   * committed after their rows were read: the push that notice queued applies them), checked as
   * the apply is sent, so a row read before a doubt is never written over it.
   */
  private notDoubtedSince(changes: KeyTableChange[], doubts: number): KeyTableChange[] {
    return changes.filter(({ id }) => {
      const at = this.state.doubtedAt.get(id);
      if (at === undefined) return true;
      if (at > doubts) return false;
      this.state.doubtedAt.delete(id);
      return true;
    });
  }
}
