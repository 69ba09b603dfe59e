import type { Logger } from '../log.js';
import type { DecisionInvalidator } from '../nginx/invalidator.js';
import { type NginxKeyTable, READ_AT_ONCE } from '../nginx/key-table.js';
import { BACKGROUND_SPANS, inBackgroundSpan } from '../tracing/tracer.js';
import {
  CATCH_UP_MARGIN,
  type ChangeFeed,
  type FeedPosition,
  formatPosition,
} from './change-feed.js';
import { GONE_RECORD, type KeyTableRow, keyRecordBytes } from './key-record-bytes.js';
import type { ReplicaLoader } from './load.js';
import type { ReplicaPushes } from './pushes.js';
import type { ReplicaState } from './replica-state.js';

/** A heartbeat's check reads the catch-up margin too once in this many checks (10 s). */
const MARGIN_BEATS = 10;

/**
 * How nginx's replica follows the change feed once it is whole: a notified change applied, a
 * catch-up from the replica's position after the feed was cut, and at each heartbeat a check of
 * what changed since and the renewal of nginx's trust. Each method runs as one operation of the
 * replicator's queue (replicator.ts), and may throw: the queue logs it.
 */
export class ReplicaFollowing {
  constructor(
    private readonly state: ReplicaState,
    private readonly feed: ChangeFeed,
    private readonly nginx: NginxKeyTable,
    /** nginx's decision markers (the control socket's /invalidate and friends). */
    private readonly markers: DecisionInvalidator,
    private readonly pushes: ReplicaPushes,
    private readonly loader: ReplicaLoader,
    private readonly log: Logger,
  ) {}

  /** A notified change, queued: the records of `ids` into nginx, while the replica is whole. */
  async applyNotified(ids: readonly number[]): Promise<void> {
    try {
      if (this.state.phase !== 'complete') return;
      await inBackgroundSpan(BACKGROUND_SPANS.keyTableChange, () =>
        this.pushes.pushOrDoubt(ids, null),
      );
    } finally {
      this.state.pending -= 1;
    }
  }

  /** LISTEN is (re)established: what changed meanwhile, or every decision dropped. */
  async resume(): Promise<void> {
    try {
      await this.resumeFromPosition();
    } catch (err) {
      // Whatever was missed cannot be told: nothing decided before now is trusted, and the
      // next heartbeat catches up from nginx's position again (or loads).
      this.state.mirror.clear();
      if (this.state.phase !== 'off') this.state.phase = 'unknown';
      await this.markers.all();
      throw err;
    }
  }

  private async resumeFromPosition(): Promise<void> {
    const s = this.state;
    const head = await this.feed.head();
    const from = s.position ?? (await this.loader.adoptNginxPosition(head));
    const since =
      from && from.epoch === head.epoch ? await this.feed.changedSince(from.position) : null;
    if (!since) {
      // A gap nothing can fill (or the first start): every decision goes, the replica is loaded.
      await this.markers.all();
      s.position = s.phase === 'off' ? head : null;
      if (s.phase !== 'off') await this.loader.load();
      return;
    }
    await this.pushes.invalidate(since.rows);
    if (s.phase === 'complete') {
      await this.pushes.pushOrDoubt(since.rows, since.head);
      s.unapplied = false;
    } else s.position = since.head;
    if (since.rows.length > 0) {
      this.log.info('caught up with the change feed', { changed: since.rows.length });
    }
    await this.loader.fillMirror();
  }

  /** nginx's replica unknown: followed from the position nginx holds, or loaded. */
  catchUpOrLoad(): Promise<void> {
    return inBackgroundSpan(BACKGROUND_SPANS.keyTableCatchUp, () => this.catchUpOrLoadNow());
  }

  private async catchUpOrLoadNow(): Promise<void> {
    const head = await this.feed.head();
    const from = await this.loader.adoptNginxPosition(head);
    if (this.state.phase === 'off') return;
    const since = from ? await this.feed.changedSince(from.position) : null;
    if (since) {
      await this.pushes.invalidate(since.rows);
      if (await this.pushes.push(since.rows, since.head, false)) await this.loader.fillMirror();
      return;
    }
    await this.loader.load();
  }

  /** A heartbeat came back (FeedFollower.heartbeat): the feed was at `head` when it was sent. */
  async beat(head: FeedPosition, sentAt: number): Promise<void> {
    const s = this.state;
    if (s.unapplied && s.phase === 'complete' && s.position) {
      // A change was not applied: read everything since the position again before anything
      // is renewed (a failure leaves it in doubt, and the next heartbeat tries again).
      const since = await this.feed.changedSince(s.position.position);
      if (!since || since.head.epoch !== s.position.epoch) {
        s.phase = 'unknown';
        s.position = null;
        await this.catchUpOrLoad();
        return;
      }
      await this.pushes.invalidate(since.rows);
      await this.pushes.push(since.rows, since.head, false);
      s.unapplied = false;
      this.log.info('caught up with the change feed after a change that could not be read', {
        changed: since.rows.length,
      });
    }
    if (s.position && s.position.epoch !== head.epoch) {
      this.log.warn('the change feed belongs to another database now; loading the key table again');
      s.position = null;
      s.phase = s.phase === 'off' ? 'off' : 'unknown';
    }
    if (s.phase === 'unknown') {
      await this.catchUpOrLoad();
      return;
    }
    if (s.phase === 'off') {
      if (s.position) s.position = head;
      return;
    }
    if (s.phase !== 'complete' || !s.position || s.unapplied) return;
    s.lagPositions = Math.max(0, head.position - s.position.position);
    // Notices can go missing while the connection lives on (a pooler that hands the LISTEN
    // to another client, a proxy), and a heartbeat that comes back after them proves
    // nothing of them: before the position moves to `head`, nginx's records of what changed
    // since are checked against PostgreSQL's rows, and any that differ are applied.
    if (head.position > s.position.position) {
      // What changed since, every time; the margin before the position (a change that
      // committed after a later one, its notice lost too) every MARGIN_BEATS-th time: read
      // at every beat it held up the notices behind it (a revocation's 5 ms became 55).
      s.beatsChecked += 1;
      const margin = s.beatsChecked % MARGIN_BEATS === 1 ? CATCH_UP_MARGIN : 0;
      await this.verify(s.position.position, head.position, margin);
      if (s.unapplied) return;
    }
    // The heartbeat came back after every notice sent before it, and each was applied (none
    // pending, none in doubt): the replica holds every change up to `head`, but for one whose
    // position was taken before and committed after (a catch-up re-reads a margin before its
    // position, change-feed.ts; its notice is on its way).
    const position = head.position > s.position.position ? head : s.position;
    s.beatSentAt = sentAt;
    const live = s.pending > 0 ? 0 : s.liveLeft();
    s.handle(
      await this.nginx.apply([], formatPosition(position), { renew: true, liveS: live }),
      'renew',
    );
    if (s.phase === 'complete') s.position = position;
  }

  /**
   * nginx's records of the clients changed in (`from` less `margin`, `through`] against
   * their rows now; a record that differs (a notice missed) is applied as a change, its
   * decisions dropped. A read that fails leaves the replica unapplied, as a failed change does.
   */
  private async verify(from: number, through: number, margin: number): Promise<void> {
    let ids: number[];
    let rows: KeyTableRow[];
    try {
      ids = await this.feed.changedThrough(from, through, margin);
      rows = await this.feed.records(ids);
    } catch (err) {
      this.state.unapplied = true;
      throw err;
    }
    const want = new Map(rows.map((row) => [row.id, keyRecordBytes(row).toString('base64')]));
    const gone = GONE_RECORD.toString('base64');
    const differ: number[] = [];
    for (let i = 0; i < ids.length; i += READ_AT_ONCE) {
      const some = ids.slice(i, i + READ_AT_ONCE);
      const held = await this.nginx.held(some);
      if (!held) {
        // nginx cannot say what it holds: it is told again, as a change would be.
        differ.push(...some);
        continue;
      }
      for (const id of some) {
        const has = held.get(id);
        // A table that is full may lack a client: it asks about those (never nobody's).
        if (has === false && this.state.nginxState?.full) continue;
        if (has !== (want.get(id) ?? gone)) differ.push(id);
      }
    }
    if (differ.length === 0) return;
    this.state.missedChanges += differ.length;
    this.log.warn(
      "notices were missed: nginx's records of changed clients corrected from the feed",
      {
        clients: differ.length,
      },
    );
    await this.pushes.invalidate(differ);
    await this.pushes.pushOrDoubt(differ, null);
  }
}
