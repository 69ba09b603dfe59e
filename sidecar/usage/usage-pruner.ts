import type { Clock } from '../clock.js';
import type { Queryable } from '../db/queryable.js';
import type { Logger } from '../log.js';

const DAY_MS = 86_400_000;

/**
 * Keeps `api_client_usage` bounded: rows older than the retention are deleted in batches of
 * `batch` rows, each its own short statement, so pruning a large backlog never holds locks or
 * a transaction for long and the flushes interleave. Every sidecar prunes; two at once only
 * share the work.
 */
export class UsagePruner {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<number> = Promise.resolve(0);

  constructor(
    private readonly db: Queryable,
    private readonly log: Logger,
    private readonly retentionDays: number,
    private readonly intervalMs: number,
    private readonly clock: Clock = Date.now,
    private readonly batch = 10_000,
  ) {}

  start(): void {
    // A first pass soon after the start, then at every interval.
    const first = setTimeout(() => void this.prune(), Math.min(this.intervalMs, 60_000));
    first.unref();
    this.timer = setInterval(() => void this.prune(), this.intervalMs);
    this.timer.unref();
  }

  stop(): Promise<number> {
    if (this.timer) clearInterval(this.timer);
    return this.running;
  }

  /** Deletes every row past the retention; the number deleted. Never throws (logs). */
  prune(): Promise<number> {
    this.running = this.running.then(() => this.pruneAll());
    return this.running;
  }

  private async pruneAll(): Promise<number> {
    const before = new Date(this.clock() - this.retentionDays * DAY_MS);
    let total = 0;
    try {
      for (;;) {
        const { rowCount } = await this.db.query(
          `DELETE FROM api_client_usage WHERE ctid = ANY(ARRAY(
             SELECT ctid FROM api_client_usage WHERE window_start < $1 LIMIT $2))`,
          [before, this.batch],
        );
        total += rowCount ?? 0;
        if ((rowCount ?? 0) < this.batch) break;
      }
    } catch (err) {
      this.log.warn('could not prune old usage rows', { error: (err as Error).message });
    }
    if (total > 0)
      this.log.info('pruned old usage rows', { rows: total, before: before.toISOString() });
    return total;
  }
}
