import { KEY_TABLE } from '../../common/contract.js';
import type { ApiClientRow } from '../clients/store/api-client.js';
import type { Logger } from '../log.js';
import type { DecisionInvalidator } from '../nginx/invalidator.js';
import {
  type KeyTableAnswer,
  type KeyTableChange,
  type KeyTableState,
  type NginxKeyTable,
  READ_AT_ONCE,
} from '../nginx/key-table.js';
import {
  CATCH_UP_MARGIN,
  type ChangeFeed,
  type FeedPosition,
  formatPosition,
  parsePosition,
} from './change-feed.js';
import { DOUBT_RECORD, GONE_RECORD, type KeyTableRow, keyRecordBytes } from './key-record-bytes.js';
import { SUBJECTS_MAX, SubjectMirror } from './subject-mirror.js';

/**
 * `off`: nginx's configuration holds no key table; `unknown`: not known yet, or nginx could not
 * be reached or must be loaded again; `loading`: a full load is under way; `complete`: nginx's
 * replica is whole and followed.
 */
export type ReplicaPhase = 'off' | 'unknown' | 'loading' | 'complete';

/** What the change listener tells whoever follows the feed (change-listener.ts). */
export interface FeedFollower {
  /**
   * LISTEN is (re)established: bring nginx up to date with what changed while nobody listened
   * (its decisions and its replica), or drop every decision when that cannot be told.
   */
  resume(): Promise<void>;
  /**
   * A heartbeat of this sidecar's came back on the LISTEN connection, every notice before it
   * handed over: the feed was at `head` when it was sent, `sentAt` (performance.now()).
   */
  heartbeat(head: FeedPosition, sentAt: number): Promise<void>;
}

/** Changes are kept in the feed this long: a replica older than that is loaded again. */
const FEED_RETENTION_S = 86_400;
/** How soon an unknown replica is tried again (nginx not up yet, or restarted). */
const RETRY_MS = 200;

export interface ReplicatorOptions {
  /** Clients per load batch (one query and one request to nginx each). */
  batchSize?: number;
}

/** What the replicator reports, for metrics and readiness. */
export interface ReplicaStatus {
  phase: ReplicaPhase;
  position: FeedPosition | null;
  /** nginx's last answer about its replica. */
  nginx: KeyTableState | null;
  /** Seconds the last full load took (sidecar side, reads and pushes), or null. */
  loadSeconds: number | null;
  /** Positions the feed was ahead of nginx's replica at the last heartbeat. */
  lagPositions: number;
  /** Clients whose change no notice brought, found by a heartbeat's check and applied then. */
  missedChanges: number;
  /** Clients with a subject whose rows this sidecar holds (its mirror of bearer clients). */
  subjects: number;
}

/** A heartbeat's check reads the catch-up margin too once in this many checks (10 s). */
const MARGIN_BEATS = 10;

/**
 * Keeps nginx's replica of the key table (docs/decisions/20261127-key-table-replica.md): loads
 * it whole when nginx has none (a start, an nginx restart, a gap in the feed), applies each
 * change as a new record, catches up from the replica's position after the feed was cut, and
 * tells nginx once a second that the feed is live (which renews its trust in the replica).
 * Also the invalidator every change goes through (wrap()): a change's markers, then its record.
 * Beside nginx's replica it keeps the rows of the clients that have a subject, whole, in this
 * sidecar (subject-mirror.ts): a bearer token's client is read from there while nginx's replica
 * is trusted (heldBySubject), not from PostgreSQL.
 * Never throws: a failure is logged and the next heartbeat tries again.
 */
export class KeyTableReplicator implements FeedFollower {
  private phase: ReplicaPhase = 'unknown';
  private position: FeedPosition | null = null;
  private nginxState: KeyTableState | null = null;
  private loadSeconds: number | null = null;
  private lagPositions = 0;
  /**
   * Doubts told so far, and the last one each id was in: a push whose rows were read before an
   * id's doubt leaves that id to the push the doubt's notice queued, never writing the row it
   * read over the doubt.
   */
  private doubts = 0;
  private readonly doubtedAt = new Map<number, number>();
  private missedChanges = 0;
  private beatsChecked = 0;
  /** Replica operations run one at a time, in order. */
  private queue: Promise<void> = Promise.resolve();
  private busy = false;
  private stopped = false;
  /** nginx was away or empty during the last operation: try again soon, not at the heartbeat. */
  private retryWanted = false;
  private readonly batchSize: number;
  private pruneTimer: NodeJS.Timeout | null = null;
  private retryTimer: NodeJS.Timeout | null = null;
  private readonly mirror = new SubjectMirror();
  /**
   * A change was notified that could not be applied (its rows not read): its ids are in doubt
   * in nginx (DOUBT_RECORD), the position stays where it is and no heartbeat renews the trust
   * until a catch-up from the position has read them (docs/decisions/20261201-no-change-skipped.md).
   */
  private unapplied = false;
  /** Changes notified and not yet applied: while any is, an id nginx does not hold is asked. */
  private pending = 0;
  /** When the last heartbeat that came back was sent (performance.now()), or null. */
  private beatSentAt: number | null = null;

  constructor(
    private readonly feed: ChangeFeed,
    private readonly nginx: NginxKeyTable,
    /** nginx's decision markers (the control socket's /invalidate and friends). */
    private readonly markers: DecisionInvalidator,
    private readonly log: Logger,
    options: ReplicatorOptions = {},
  ) {
    this.batchSize = options.batchSize ?? 1_000;
  }

  /** Prunes the feed now and then: changes older than a day (every pair follows within seconds). */
  start(): void {
    const prune = () =>
      this.feed
        .prune(FEED_RETENTION_S)
        .catch((err: Error) =>
          this.log.warn('could not prune the change feed', { error: err.message }),
        );
    const first = setTimeout(() => void prune(), 60_000);
    first.unref();
    this.pruneTimer = setInterval(() => void prune(), 3_600_000);
    this.pruneTimer.unref();
  }

  /** Stops pruning and lets the operation under way finish. nginx keeps its replica. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.pruneTimer) clearInterval(this.pruneTimer);
    if (this.retryTimer) clearTimeout(this.retryTimer);
    await this.queue;
  }

  status(): ReplicaStatus {
    return {
      phase: this.phase,
      position: this.position,
      nginx: this.nginxState,
      loadSeconds: this.loadSeconds,
      lagPositions: this.lagPositions,
      missedChanges: this.missedChanges,
      subjects: this.mirror.size,
    };
  }

  /**
   * The row of the client whose subject is `subject`, from this sidecar's mirror, while nginx's
   * replica is complete and trusted (the trust each live heartbeat renews, key_table.trust_s:
   * the rule nginx applies to the records it holds); undefined when not held or not trusted
   * (then PostgreSQL is asked, as before).
   */
  heldBySubject(subject: string): ApiClientRow | undefined {
    if (this.phase !== 'complete') return undefined;
    const until = this.nginxState?.trustedUntil;
    if (!until || Date.now() >= until * 1000) return undefined;
    return this.mirror.get(subject);
  }

  /** An invalidator whose changes reach the replica too, after their markers. */
  wrap(): DecisionInvalidator {
    return {
      clients: async (ids) => {
        // Before nginx's decisions end: a question asked after that is never answered from
        // the row the change replaced.
        this.mirror.drop(ids);
        const ok = await this.markers.clients(ids);
        await this.changed(ids, true);
        return ok;
      },
      created: async (ids) => {
        const ok = await this.markers.created(ids);
        await this.changed(ids, false);
        return ok;
      },
      all: () => this.markers.all(),
    };
  }

  /**
   * Clients `ids` changed (created, updated, deleted): their records as they are now. `held`:
   * ids nginx may hold a record of (an update or a deletion), which it stops using at once: in
   * doubt until their rows are read, however long that takes (a lock, a database away).
   */
  async changed(ids: readonly number[], held = true): Promise<void> {
    // With no replica there is nothing to do. Otherwise queued, also while a load is under way:
    // a change committed after the load's catch-up read is in no batch of it, and would be lost
    // (the heartbeat then moves the position past it); queued, it runs once the load is done.
    if (this.phase === 'off' || ids.length === 0) return Promise.resolve();
    // Not nobody's until applied: a client created a moment ago may be among them.
    this.pending += 1;
    if (this.phase === 'complete') await this.inDoubt(held ? ids : []);
    // The push is queued, not waited for: the listener goes on to the next notice, whose doubt
    // must not wait behind a read that a lock holds up (settled() waits for it).
    void this.run(async () => {
      try {
        if (this.phase !== 'complete') return;
        try {
          await this.push(ids, null, false);
        } catch (err) {
          await this.doubt(ids);
          throw err;
        }
      } finally {
        this.pending -= 1;
      }
    });
  }

  /**
   * The rows of `ids` could not be read: nginx drops what it holds of them and asks about them
   * (never the old record, never "nobody's"), and the replica catches up from its position.
   */
  private async doubt(ids: readonly number[]): Promise<void> {
    this.unapplied = true;
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
  private async inDoubt(ids: readonly number[]): Promise<void> {
    this.doubts += 1;
    for (const id of ids) this.doubtedAt.set(id, this.doubts);
    const answer = await this.nginx.apply(
      ids.map((id) => ({ id, record: DOUBT_RECORD })),
      null,
      { liveS: 0 },
    );
    if (answer.kind === 'state' || ids.length === 0) return;
    this.handle(answer, 'doubt');
    if (this.phase !== 'off') {
      this.phase = 'unknown';
      this.position = null;
    }
  }

  /** Seconds an absent id may still be nobody's after the last heartbeat that came back. */
  private liveLeft(): number {
    if (this.beatSentAt === null) return 0;
    return Math.max(0, KEY_TABLE.liveSeconds - (performance.now() - this.beatSentAt) / 1000);
  }

  resume(): Promise<void> {
    return this.run(async () => {
      try {
        await this.resumeFromPosition();
      } catch (err) {
        // Whatever was missed cannot be told: nothing decided before now is trusted, and the
        // next heartbeat catches up from nginx's position again (or loads).
        this.mirror.clear();
        if (this.phase !== 'off') this.phase = 'unknown';
        await this.markers.all();
        throw err;
      }
    });
  }

  private async resumeFromPosition(): Promise<void> {
    const head = await this.feed.head();
    const from = this.position ?? (await this.adoptNginxPosition(head));
    const since =
      from && from.epoch === head.epoch ? await this.feed.changedSince(from.position) : null;
    if (!since) {
      // A gap nothing can fill (or the first start): every decision goes, the replica is loaded.
      await this.markers.all();
      this.position = this.phase === 'off' ? head : null;
      if (this.phase !== 'off') await this.load();
      return;
    }
    await this.invalidate(since.rows);
    if (this.phase === 'complete') {
      try {
        await this.push(since.rows, since.head, false);
      } catch (err) {
        await this.doubt(since.rows);
        throw err;
      }
      this.unapplied = false;
    } else this.position = since.head;
    if (since.rows.length > 0) {
      this.log.info('caught up with the change feed', { changed: since.rows.length });
    }
    await this.fillMirror();
  }

  /** Clients `ids` changed while nobody listened: their rows held, then nginx's decisions. */
  private async invalidate(ids: readonly number[]): Promise<void> {
    this.mirror.drop(ids);
    await this.markers.clients(ids);
  }

  /**
   * Reads every client with a subject into the mirror when it holds less than all of them (a
   * sidecar restarted beside a running nginx adopts its replica: nothing was loaded here).
   */
  private async fillMirror(): Promise<void> {
    if (this.phase !== 'complete' || this.mirror.filled) return;
    const since = this.mirror.reading();
    for await (const rows of this.feed.withSubjects(this.batchSize)) this.mirror.put(rows, since);
    this.mirror.filled = true;
    this.mirrorHeld();
  }

  /** Says once per load or fill that the mirror could not hold every bearer client. */
  private mirrorHeld(): void {
    if (!this.mirror.overflowed) return;
    this.log.warn(
      "the sidecar holds the rows of the first bearer clients only; the others' tokens are looked up in PostgreSQL",
      { held: this.mirror.size, max: SUBJECTS_MAX },
    );
  }

  heartbeat(head: FeedPosition, sentAt: number): Promise<void> {
    // A load or a catch-up under way says more than a heartbeat; the next one comes in a second.
    if (this.busy) return Promise.resolve();
    return this.run(async () => {
      if (this.unapplied && this.phase === 'complete' && this.position) {
        // A change was not applied: read everything since the position again before anything
        // is renewed (a failure leaves it in doubt, and the next heartbeat tries again).
        const since = await this.feed.changedSince(this.position.position);
        if (!since || since.head.epoch !== this.position.epoch) {
          this.phase = 'unknown';
          this.position = null;
          await this.resumeUnlocked();
          return;
        }
        await this.invalidate(since.rows);
        await this.push(since.rows, since.head, false);
        this.unapplied = false;
        this.log.info('caught up with the change feed after a change that could not be read', {
          changed: since.rows.length,
        });
      }
      if (this.position && this.position.epoch !== head.epoch) {
        this.log.warn(
          'the change feed belongs to another database now; loading the key table again',
        );
        this.position = null;
        this.phase = this.phase === 'off' ? 'off' : 'unknown';
      }
      if (this.phase === 'unknown') {
        await this.resumeUnlocked();
        return;
      }
      if (this.phase === 'off') {
        if (this.position) this.position = head;
        return;
      }
      if (this.phase !== 'complete' || !this.position || this.unapplied) return;
      this.lagPositions = Math.max(0, head.position - this.position.position);
      // Notices can go missing while the connection lives on (a pooler that hands the LISTEN
      // to another client, a proxy), and a heartbeat that comes back after them proves
      // nothing of them: before the position moves to `head`, nginx's records of what changed
      // since are checked against PostgreSQL's rows, and any that differ are applied.
      if (head.position > this.position.position) {
        // What changed since, every time; the margin before the position (a change that
        // committed after a later one, its notice lost too) every MARGIN_BEATS-th time: read
        // at every beat it held up the notices behind it (a revocation's 5 ms became 55).
        this.beatsChecked += 1;
        const margin = this.beatsChecked % MARGIN_BEATS === 1 ? CATCH_UP_MARGIN : 0;
        await this.verify(this.position.position, head.position, margin);
        if (this.unapplied) return;
      }
      // The heartbeat came back after every notice sent before it, and each was applied (none
      // pending, none in doubt): the replica holds every change up to `head`, but for one whose
      // position was taken before and committed after (a catch-up re-reads a margin before its
      // position, change-feed.ts; its notice is on its way).
      const position = head.position > this.position.position ? head : this.position;
      this.beatSentAt = sentAt;
      const live = this.pending > 0 ? 0 : this.liveLeft();
      this.handle(
        await this.nginx.apply([], formatPosition(position), { renew: true, liveS: live }),
        'renew',
      );
      if (this.phase === 'complete') this.position = position;
    });
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
      this.unapplied = true;
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
        if (has === false && this.nginxState?.full) continue;
        if (has !== (want.get(id) ?? gone)) differ.push(id);
      }
    }
    if (differ.length === 0) return;
    this.missedChanges += differ.length;
    this.log.warn(
      "notices were missed: nginx's records of changed clients corrected from the feed",
      {
        clients: differ.length,
      },
    );
    await this.invalidate(differ);
    try {
      await this.push(differ, null, false);
    } catch (err) {
      await this.doubt(differ);
      throw err;
    }
  }

  /** The replica nginx already holds (this sidecar restarted, nginx did not), if it can be followed. */
  private async adoptNginxPosition(head: FeedPosition): Promise<FeedPosition | null> {
    const answer = await this.nginx.state();
    this.handle(answer, 'read');
    if (answer.kind !== 'state') return null;
    const position = parsePosition(answer.state.position);
    if (answer.state.phase !== 'complete' || !position || position.epoch !== head.epoch)
      return null;
    this.phase = 'complete';
    return position;
  }

  private async resumeUnlocked(): Promise<void> {
    const head = await this.feed.head();
    const from = await this.adoptNginxPosition(head);
    if (this.phase === 'off') return;
    const since = from ? await this.feed.changedSince(from.position) : null;
    if (since) {
      await this.invalidate(since.rows);
      if (await this.push(since.rows, since.head, false)) await this.fillMirror();
      return;
    }
    await this.load();
  }

  /** Loads every client into nginx's replica, then what changed meanwhile, and completes it. */
  private async load(): Promise<void> {
    const started = performance.now();
    // Everything is read again: nothing is in doubt once it completes, and nothing is trusted
    // before. (Changes notified during the load are queued, not doubted: no doubt to keep.)
    this.unapplied = false;
    this.doubtedAt.clear();
    this.mirror.clear();
    const since = this.mirror.reading();
    const head = await this.feed.head();
    const at = formatPosition(head);
    if (!this.handle(await this.nginx.load(at), 'load')) return;
    this.phase = 'loading';
    let records = 0;
    for await (const rows of this.feed.all(this.batchSize)) {
      this.mirror.put(rows, since);
      if (!this.handle(await this.nginx.apply(rows.map(change), at), 'load')) return;
      records += rows.length;
    }
    const changed = await this.feed.changedSince(head.position);
    if (!changed) {
      this.phase = 'unknown';
      return;
    }
    const pushed = await this.push(changed.rows, changed.head, true);
    if (!pushed) return;
    this.mirror.filled = true;
    this.mirrorHeld();
    this.loadSeconds = (performance.now() - started) / 1000;
    this.log.info('key table loaded into nginx', {
      records,
      seconds: Number(this.loadSeconds.toFixed(3)),
      full: this.nginxState?.full ?? false,
    });
  }

  /**
   * The records of `ids` as they are now (absent: deleted, GONE_RECORD) into nginx, and the
   * position `head` (a load's or a catch-up's; null for notified changes, which never move it:
   * only a heartbeat or a catch-up does).
   */
  private async push(
    ids: readonly number[],
    head: FeedPosition | null,
    complete: boolean,
  ): Promise<boolean> {
    const since = this.mirror.reading();
    const doubtsBefore = this.doubts;
    const rows = await this.feed.records(ids);
    const found = new Map(rows.map((row) => [row.id, row]));
    this.mirror.put(rows, since);
    this.mirror.gone(
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
        done ? { complete: true, renew: true, liveS: this.liveLeft() } : {},
      );
      if (!this.handle(answer, 'apply')) return false;
    }
    if (complete || this.phase === 'complete') {
      this.phase = 'complete';
      if (head) this.position = head;
    }
    return true;
  }

  /**
   * `changes` but for the ids put in doubt after `doubts` (a notice of a change that may have
   * committed after their rows were read: the push that notice queued applies them), checked as
   * the apply is sent, so a row read before a doubt is never written over it.
   */
  private notDoubtedSince(changes: KeyTableChange[], doubts: number): KeyTableChange[] {
    return changes.filter(({ id }) => {
      const at = this.doubtedAt.get(id);
      if (at === undefined) return true;
      if (at > doubts) return false;
      this.doubtedAt.delete(id);
      return true;
    });
  }

  /**
   * nginx's answer: true when it took the request. Anything else says what to do next: no
   * replica configured (off), nginx restarted or away (loaded again at the next heartbeat).
   */
  private handle(answer: KeyTableAnswer, what: string): boolean {
    switch (answer.kind) {
      case 'state': {
        const wasFull = this.nginxState?.full ?? false;
        this.nginxState = answer.state;
        if (answer.state.full && !wasFull) {
          this.log.error(
            'the key table is full: nginx asks about the clients it could not hold; raise key_table.size',
            {
              records: answer.state.records,
            },
          );
        }
        return true;
      }
      case 'absent':
        if (this.phase !== 'off')
          this.log.info('nginx holds no key table (key_table.enabled is false)');
        this.phase = 'off';
        this.nginxState = null;
        return false;
      case 'empty':
        this.retryWanted = true;
        this.log.warn('nginx lost its key table (restarted); loading it again');
        this.phase = 'unknown';
        this.position = null;
        return false;
      case 'unreachable':
        this.retryWanted = true;
        if (this.phase !== 'unknown') {
          this.log.warn('cannot reach nginx for its key table; trying again', {
            what,
            error: answer.why,
          });
        }
        this.phase = this.phase === 'off' ? 'off' : 'unknown';
        if (this.phase === 'unknown') this.position = null;
        return false;
    }
  }

  /**
   * Tries again soon while nginx's replica is unknown (nginx starting after this sidecar, or
   * restarted): a pair is not ready until it is loaded, so this does not wait for a heartbeat.
   */
  private retrySoon(): void {
    if (this.retryTimer || this.phase !== 'unknown' || this.stopped) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      if (this.phase === 'unknown' && !this.busy) {
        void this.run(() => this.resumeUnlocked());
      }
    }, RETRY_MS);
    this.retryTimer.unref();
  }

  /** Resolves once every operation queued so far (pushes, heartbeats, catch-ups) has run. */
  settled(): Promise<void> {
    return this.queue;
  }

  /** Runs `op` after every operation queued before it; a failure is logged, never thrown. */
  private run(op: () => Promise<void>): Promise<void> {
    const next = this.queue.then(async () => {
      this.busy = true;
      try {
        await op();
      } catch (err) {
        this.log.warn('key table replication failed; trying again at the next heartbeat', {
          error: (err as Error).message,
        });
        if (this.phase === 'loading') this.phase = 'unknown';
      } finally {
        this.busy = false;
        if (this.retryWanted) this.retrySoon();
        this.retryWanted = false;
      }
    });
    this.queue = next;
    return next;
  }
}

function change(row: KeyTableRow): KeyTableChange {
  return { id: row.id, record: keyRecordBytes(row) };
}
