import type { ApiClientRow } from '../clients/store/api-client.js';
import type { Logger } from '../log.js';
import type { DecisionInvalidator } from '../nginx/invalidator.js';
import type { NginxKeyTable } from '../nginx/key-table.js';
import type { ChangeFeed, FeedPosition } from './change-feed.js';
import { ReplicaFollowing } from './follow.js';
import { ReplicaLoader } from './load.js';
import { ReplicaPushes } from './pushes.js';
import { ReplicaState, type ReplicaStatus } from './replica-state.js';

export type { ReplicaPhase, ReplicaStatus } from './replica-state.js';

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

/**
 * Keeps nginx's replica of the key table (docs/decisions/20261127-key-table-replica.md): loads
 * it whole when nginx has none (a start, an nginx restart, a gap in the feed), applies each
 * change as a new record, catches up from the replica's position after the feed was cut, and
 * tells nginx once a second that the feed is live (which renews its trust in the replica).
 * Also the invalidator every change goes through (wrap()): a change's markers, then its record.
 * Beside nginx's replica it keeps the rows of the clients, whole (up to its bounds), in this
 * sidecar (client-mirror.ts): a bearer token's or an API key's client is read from there while
 * nginx's replica is trusted (heldBySubject, heldById), not from PostgreSQL.
 * Never throws: a failure is logged and the next heartbeat tries again. This class is the queue
 * its operations run in, one at a time; what they do is in load.ts (a full load, the adoption of
 * nginx's replica), follow.ts (changes, catch-ups, heartbeats) and pushes.ts (records and doubts
 * sent to nginx), over the state they share (replica-state.ts).
 */
export class KeyTableReplicator implements FeedFollower {
  private readonly state: ReplicaState;
  private readonly pushes: ReplicaPushes;
  private readonly follow: ReplicaFollowing;
  /** Replica operations run one at a time, in order. */
  private queue: Promise<void> = Promise.resolve();
  private busy = false;
  private stopped = false;
  private pruneTimer: NodeJS.Timeout | null = null;
  private retryTimer: NodeJS.Timeout | null = null;

  constructor(
    private readonly feed: ChangeFeed,
    nginx: NginxKeyTable,
    /** nginx's decision markers (the control socket's /invalidate and friends). */
    private readonly markers: DecisionInvalidator,
    private readonly log: Logger,
    options: ReplicatorOptions = {},
  ) {
    const batchSize = options.batchSize ?? 1_000;
    this.state = new ReplicaState(log);
    this.pushes = new ReplicaPushes(this.state, feed, nginx, markers, log, batchSize);
    const loader = new ReplicaLoader(this.state, feed, nginx, this.pushes, log, batchSize);
    this.follow = new ReplicaFollowing(this.state, feed, nginx, markers, this.pushes, loader, log);
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
    return this.state.status();
  }

  /**
   * The row of the client whose subject is `subject`, from this sidecar's mirror, while nginx's
   * replica is complete and trusted (the trust each live heartbeat renews, key_table.trust_s:
   * the rule nginx applies to the records it holds); undefined when not held or not trusted
   * (then PostgreSQL is asked, as before).
   */
  heldBySubject(subject: string): ApiClientRow | undefined {
    return this.trusted() ? this.state.mirror.get(subject) : undefined;
  }

  /** The row of client `id` from the mirror, under the same rule as heldBySubject. */
  heldById(id: number): ApiClientRow | undefined {
    return this.trusted() ? this.state.mirror.byId(id) : undefined;
  }

  private trusted(): boolean {
    if (this.state.phase !== 'complete') return false;
    const until = this.state.nginxState?.trustedUntil;
    return until !== undefined && until !== null && Date.now() < until * 1000;
  }

  /** An invalidator whose changes reach the replica too, after their markers. */
  wrap(): DecisionInvalidator {
    return {
      clients: async (ids) => {
        // Before nginx's decisions end: a question asked after that is never answered from
        // the row the change replaced.
        this.state.mirror.drop(ids);
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
    if (this.state.phase === 'off' || ids.length === 0) return Promise.resolve();
    // Not nobody's until applied: a client created a moment ago may be among them.
    this.state.pending += 1;
    if (this.state.phase === 'complete') await this.pushes.inDoubt(held ? ids : []);
    // The push is queued, not waited for: the listener goes on to the next notice, whose doubt
    // must not wait behind a read that a lock holds up (settled() waits for it).
    void this.run(() => this.follow.applyNotified(ids));
  }

  resume(): Promise<void> {
    return this.run(() => this.follow.resume());
  }

  heartbeat(head: FeedPosition, sentAt: number): Promise<void> {
    // A load or a catch-up under way says more than a heartbeat; the next one comes in a second.
    if (this.busy) return Promise.resolve();
    return this.run(() => this.follow.beat(head, sentAt));
  }

  /**
   * Tries again soon while nginx's replica is unknown (nginx starting after this sidecar, or
   * restarted): a pair is not ready until it is loaded, so this does not wait for a heartbeat.
   */
  private retrySoon(): void {
    if (this.retryTimer || this.state.phase !== 'unknown' || this.stopped) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      if (this.state.phase === 'unknown' && !this.busy) {
        void this.run(() => this.follow.catchUpOrLoad());
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
        if (this.state.phase === 'loading') this.state.phase = 'unknown';
      } finally {
        this.busy = false;
        if (this.state.retryWanted) this.retrySoon();
        this.state.retryWanted = false;
      }
    });
    this.queue = next;
    return next;
  }
}
