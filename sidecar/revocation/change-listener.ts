import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { BEAT_NOTICE_PREFIX, CLIENT_CHANGES_CHANNEL } from '../../common/contract.js';
import type { Logger } from '../log.js';
import type { SidecarMetrics } from '../metrics/sidecar-metrics.js';
import type { DecisionInvalidator } from '../nginx/invalidator.js';
import type { FeedPosition } from '../replica/change-feed.js';
import type { FeedFollower } from '../replica/replicator.js';
import { type ChangeNotice, parseBeatNotice, parseChangeNotice } from './change-notice.js';

export interface ChangeListenerOptions {
  databaseUrl: string;
  invalidator: DecisionInvalidator;
  log: Logger;
  /** Longest wait between reconnection attempts. */
  maxBackoffMs?: number;
  /** Where the push lag (notification received → nginx acknowledged) is recorded. */
  metrics?: SidecarMetrics | null;
  /**
   * Follows the feed's positions (the key table's replica): catches up after a gap instead of
   * dropping every decision, and hears once a second that the feed is live.
   */
  follower?: FeedFollower | null;
  /** How often a heartbeat is sent through NOTIFY (and must come back on the LISTEN connection). */
  heartbeatMs?: number;
  /**
   * How long the LISTEN connection may deliver none of this sidecar's heartbeats before it is
   * taken for lost (a half-dead socket, a pooler in transaction mode): then reconnected and
   * caught up. Default 3 heartbeats, within the key table's live window.
   */
  silenceMs?: number;
}

/**
 * LISTENs on its own connection for changes of API clients (triggers NOTIFY the row id on
 * UPDATE or DELETE, and `created:` and the id on INSERT, whichever sidecar made it) and
 * invalidates this sidecar's nginx (a creation only ends "no client has this id").
 * Notifications sent while the connection is down are lost: with a follower (the key table's
 * replicator) a (re)connection catches up from the feed's position and ends only what changed
 * meanwhile; without one, every (re)connection invalidates everything. Once a second it sends a
 * heartbeat through NOTIFY carrying the feed's head, and tells the follower only when it comes
 * back on this connection after the notices before it (a connection that answers queries but
 * delivers nothing is taken for lost: docs/decisions/20261201-no-change-skipped.md). Losing the
 * connection does not: most often the database itself is gone (restarted, failed over), and
 * then nobody can change a client either, while nginx's decisions keep callers in. What a
 * change made elsewhere during a gap leaves in nginx ends when this sidecar listens again, or
 * at `auth_cache.max_age_ms` (docs/decisions/20261125-replicas-behind-a-balancer.md).
 */
export class ChangeListener {
  private client: pg.Client | null = null;
  private stopped = false;
  /** Row ids to invalidate → when their first notification arrived (performance.now()). */
  private pending = new Map<number, number>();
  /** Row ids of new clients to announce, likewise. */
  private pendingCreated = new Map<number, number>();
  private flushing = false;
  private attempt = 0;
  private timer: NodeJS.Timeout | null = null;
  private heartbeatTimer: NodeJS.Timeout | null = null;
  /** Resolves once the first LISTEN is in place (or the listener is stopped). */
  readonly ready: Promise<void>;
  private markReady: () => void = () => {};
  /** Connections made so far (tests and metrics read it). */
  connections = 0;
  /** This sidecar's name in its heartbeats (others' are ignored). */
  private readonly sender = randomBytes(8).toString('hex');
  /** Heartbeats sent: their number → when (performance.now()). */
  private beatsSent = new Map<number, number>();
  private beatsMade = 0;
  /** When the last of this sidecar's heartbeats came back (performance.now()). */
  private beatReceivedAt = 0;
  /** A heartbeat received, handed over once every notice before it is. */
  private pendingBeat: { head: FeedPosition; sentAt: number } | null = null;

  constructor(private readonly options: ChangeListenerOptions) {
    this.ready = new Promise((resolve) => {
      this.markReady = resolve;
    });
  }

  start(): void {
    void this.connect();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    if (this.heartbeatTimer) clearTimeout(this.heartbeatTimer);
    this.markReady();
    const client = this.client;
    this.client = null;
    await client?.end().catch(() => {});
  }

  private async connect(): Promise<void> {
    if (this.stopped) return;
    const { log, invalidator } = this.options;
    const client = new pg.Client({
      connectionString: this.options.databaseUrl,
      connectionTimeoutMillis: 3_000,
      application_name: 'gateway-sidecar-listen',
      // Notices a dead peer without waiting for the next notification.
      keepAlive: true,
      // A heartbeat that does not come back is a connection lost.
      query_timeout: 3_000,
    });
    client.on('error', (err) => this.lost(client, err));
    client.on('end', () => this.lost(client, new Error('connection ended')));
    client.on('notification', (message) => {
      if (message.payload?.startsWith(BEAT_NOTICE_PREFIX)) {
        if (this.client === client) this.received(message.payload);
        return;
      }
      const notice = parseChangeNotice(message.payload);
      if (notice) this.enqueue(notice);
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${CLIENT_CHANGES_CHANNEL}`);
    } catch (err) {
      await client.end().catch(() => {});
      this.retry(err as Error);
      return;
    }
    if (this.stopped) {
      await client.end().catch(() => {});
      return;
    }
    this.client = client;
    this.connections += 1;
    const reconnected = this.attempt > 0 || this.connections > 1;
    this.attempt = 0;
    const follower = this.options.follower;
    if (follower) {
      // Whatever changed while nobody listened, read from the feed.
      await follower.resume();
      if (reconnected) log.info('listening for API client changes again; caught up');
      else log.info('listening for API client changes');
      this.beat(client, follower);
    } else {
      // Whatever changed while nobody listened: nothing decided before now is trusted.
      await invalidator.all();
      if (reconnected)
        log.info('listening for API client changes again; every decision invalidated');
      else log.info('listening for API client changes');
    }
    this.markReady();
  }

  /**
   * Sends a heartbeat through NOTIFY on `client` every heartbeatMs: the feed's head as its own
   * statement saw it, which comes back on this same connection after every notice committed
   * before it. Only a heartbeat that comes back tells the follower the feed is live; none for
   * silenceMs and the connection is lost (it answers queries but delivers nothing).
   */
  private beat(client: pg.Client, follower: FeedFollower): void {
    this.beatReceivedAt = performance.now();
    this.beatsSent.clear();
    this.pendingBeat = null;
    const every = this.options.heartbeatMs ?? 1_000;
    const silence = this.options.silenceMs ?? 3 * every;
    const next = () => {
      this.heartbeatTimer = setTimeout(async () => {
        if (this.client !== client) return;
        if (performance.now() - this.beatReceivedAt > silence) {
          this.lost(client, new Error(`no heartbeat came back within ${silence} ms`));
          return;
        }
        const n = ++this.beatsMade;
        this.beatsSent.set(n, performance.now());
        // Sent ones never answered are forgotten after a while.
        for (const old of this.beatsSent.keys()) if (old < n - 64) this.beatsSent.delete(old);
        try {
          await client.query(
            `SELECT pg_notify($1, $2 || epoch || ':' || GREATEST(
                      COALESCE((SELECT max(position) FROM api_client_feed), 0), pruned_through))
               FROM api_client_feed_epoch`,
            [CLIENT_CHANGES_CHANNEL, `${BEAT_NOTICE_PREFIX}${this.sender}:${n}:`],
          );
        } catch (err) {
          this.lost(client, err as Error);
          return;
        }
        next();
      }, every);
      this.heartbeatTimer.unref();
    };
    this.follower = follower;
    next();
  }

  private follower: FeedFollower | null = null;

  /** One of this sidecar's heartbeats came back: handed over after the notices before it. */
  private received(payload: string): void {
    const beat = parseBeatNotice(payload);
    if (!beat || beat.sender !== this.sender) return;
    const sentAt = this.beatsSent.get(beat.n);
    if (sentAt === undefined) return;
    this.beatsSent.delete(beat.n);
    this.beatReceivedAt = performance.now();
    this.pendingBeat = { head: beat.head, sentAt };
    if (this.flushing) return;
    this.flushing = true;
    setImmediate(() => void this.flush());
  }

  private lost(client: pg.Client, err: Error): void {
    if (this.client !== client) return;
    this.client = null;
    client.end().catch(() => {});
    if (this.stopped) return;
    this.options.log.warn(
      'lost the LISTEN connection; reconnecting (every decision is invalidated once back)',
      { error: err.message },
    );
    this.retry(err);
  }

  private retry(err: Error): void {
    if (this.stopped) return;
    this.attempt += 1;
    const delay = Math.min(100 * 2 ** (this.attempt - 1), this.options.maxBackoffMs ?? 1_000);
    if (this.attempt === 1 || this.attempt % 10 === 0) {
      this.options.log.warn('cannot LISTEN for API client changes; retrying', {
        attempt: this.attempt,
        delay,
        error: err.message,
      });
    }
    this.timer = setTimeout(() => void this.connect(), delay);
  }

  /** Notifications of one turn of the event loop go to nginx in one request of each kind. */
  private enqueue({ kind, row }: ChangeNotice): void {
    const pending = kind === 'created' ? this.pendingCreated : this.pending;
    if (!pending.has(row)) pending.set(row, performance.now());
    if (this.flushing) return;
    this.flushing = true;
    setImmediate(() => void this.flush());
  }

  private async flush(): Promise<void> {
    const { invalidator } = this.options;
    while (this.pending.size > 0 || this.pendingCreated.size > 0 || this.pendingBeat) {
      // A change invalidates more than a creation does: a row with both needs only the change.
      for (const row of this.pending.keys()) this.pendingCreated.delete(row);
      const changed = taken(this.pending);
      const created = taken(this.pendingCreated);
      if (changed.rows.length > 0)
        this.observeLag(await invalidator.clients(changed.rows), changed);
      if (created.rows.length > 0)
        this.observeLag(await invalidator.created(created.rows), created);
      // A heartbeat only once every notice received before it has been handed over.
      if (this.pending.size === 0 && this.pendingCreated.size === 0 && this.pendingBeat) {
        const { head, sentAt } = this.pendingBeat;
        this.pendingBeat = null;
        // Queued behind the notices' pushes in the follower, not waited for here: its check
        // of the feed can wait on a lock, and the notices after it must be doubted meanwhile.
        void this.follower?.heartbeat(head, sentAt);
      }
    }
    this.flushing = false;
  }

  private observeLag(acknowledged: boolean, { received }: Taken): void {
    const lag = this.options.metrics?.revocationLag;
    if (!acknowledged || !lag) return;
    const now = performance.now();
    for (const at of received) lag.observe((now - at) / 1000);
  }
}

interface Taken {
  rows: number[];
  /** When each row's first notification arrived (performance.now()). */
  received: number[];
}

/** Empties `pending`, returning what it held. */
function taken(pending: Map<number, number>): Taken {
  const out = { rows: [...pending.keys()], received: [...pending.values()] };
  pending.clear();
  return out;
}
