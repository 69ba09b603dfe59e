import { Counter } from 'prom-client';
import type { Queryable } from '../db/queryable.js';
import type { Logger } from '../log.js';
import type { SidecarMetrics } from '../metrics/sidecar-metrics.js';
import { applyLimits, excessGrowth, type OverState, windowsToRead } from './over-admission.js';
import { readRowLimits } from './window-limits.js';

/**
 * `gateway_rate_limit_over_admitted_total`: the requests the fleet admitted over its clients'
 * rate limits, from the window totals of each sync (over-admission.ts) and the limits read
 * from PostgreSQL for the windows' clients (window-limits.ts). Off the sync's path: a sync
 * hands its totals over and goes on; a slow or absent database delays the count, never the
 * sync (nginx's view of the fleet). Totals handed over while a read runs replace one another:
 * each is the fleet's whole count so far, so the last is all that is needed.
 */
export class OverAdmissionMeter {
  private readonly states = new Map<string, OverState>();
  private readonly counter: Counter;
  private next: { totals: Map<string, number>; nowS: number } | null = null;
  private running: Promise<void> | null = null;
  private failing = false;
  private seen = 0;

  constructor(
    private readonly db: Queryable,
    private readonly log: Logger,
    metrics: SidecarMetrics,
  ) {
    this.counter = new Counter({
      name: 'gateway_rate_limit_over_admitted_total',
      help: 'Requests the fleet admitted over their rate limit (a window total above it), as this pair saw them; every pair sees the same fleet.',
      registers: [metrics.registry],
    });
  }

  /** Requests over their limits seen since this sidecar started; readiness reports it. */
  get overAdmitted(): number {
    return this.seen;
  }

  /** One sync's fleet totals, by window key, at `nowS` (Unix s). */
  observe(totals: Map<string, number>, nowS: number): void {
    this.next = { totals, nowS };
    this.running ??= this.drain();
  }

  /** Once what was handed over is counted. */
  async idle(): Promise<void> {
    while (this.running) await this.running;
  }

  private async drain(): Promise<void> {
    try {
      while (this.next) {
        const { totals, nowS } = this.next;
        this.next = null;
        await this.count(totals, nowS);
      }
    } finally {
      // In the same turn as the loop's last check: totals handed over later start a new drain.
      this.running = null;
    }
  }

  private async count(totals: Map<string, number>, nowS: number): Promise<void> {
    const toRead = windowsToRead(totals, this.states);
    const pending = new Set<string>();
    if (toRead.length > 0) {
      const rows = [...new Set(toRead.map((w) => w.row))];
      const sinceS = toRead.reduce((min, w) => Math.min(min, w.index * w.per), Infinity);
      try {
        applyLimits(toRead, await readRowLimits(this.db, rows, sinceS), totals, this.states);
        if (this.failing) this.log.info('rate limits readable again: over-admission is counted');
        this.failing = false;
      } catch (err) {
        for (const w of toRead) pending.add(w.key);
        if (!this.failing) {
          this.log.warn('cannot read rate limits: over-admission is not counted until it can', {
            error: (err as Error).message,
          });
        }
        this.failing = true;
      }
    }
    const growth = excessGrowth(totals, this.states, nowS, pending);
    if (growth > 0) {
      this.seen += growth;
      this.counter.inc(growth);
    }
  }
}
