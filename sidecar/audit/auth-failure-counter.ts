import type { AuthObserver } from '../auth/auth-observer.js';
import type { AuthFailure } from '../auth/decision.js';
import type { Clock } from '../clock.js';
import type { Queryable } from '../db/queryable.js';
import { SerialFlush } from '../db/serial-flush.js';
import type { Logger } from '../log.js';
import type { NginxFailureSource } from '../nginx/failures.js';

const MINUTE_MS = 60_000;

export interface FailureCounterOptions {
  /** How often the counts go to the database (ms). */
  flushMs?: number;
  /** Distinct (client, reason, minute) counts held between flushes; beyond, counted as no client. */
  maxEntries?: number;
  /** nginx's own refusals (decided without asking), collected at every flush. */
  nginx?: NginxFailureSource;
}

interface Count {
  apiKeyId: number | null;
  reason: string;
  windowStart: number;
  count: number;
}

/**
 * Counts refused authentications per (client, reason, minute) in memory and adds the counts to
 * `auth_failures` every few seconds by upsert: a flood changes a few counters, it writes no
 * row per request. Memory is bounded: past `maxEntries` distinct counts, a refusal is counted
 * under no client (one entry per reason and minute), and past that slack it is only tallied
 * as dropped and logged. Each (client, reason, minute) gets one log line, at the first flush
 * that sees it, with the count so far; the table holds the rest.
 */
export class AuthFailureCounter implements AuthObserver {
  private counts = new Map<string, Count>();
  private readonly logged = new Set<string>();
  private dropped = 0;
  private readonly flusher: SerialFlush;
  private readonly maxEntries: number;
  private readonly nginx: NginxFailureSource | undefined;

  constructor(
    private readonly db: Queryable,
    private readonly log: Logger,
    private readonly now: Clock = Date.now,
    options: FailureCounterOptions = {},
  ) {
    this.flusher = new SerialFlush(() => this.write(), options.flushMs ?? 5_000);
    this.maxEntries = options.maxEntries ?? 10_000;
    this.nginx = options.nginx;
  }

  start(): void {
    this.flusher.start();
  }

  accepted(): void {}

  refused(failure: AuthFailure): void {
    this.add(failure.clientRow ?? null, failure.code, this.now(), 1);
  }

  /** How many distinct counts wait in memory (tests watch it stay bounded). */
  get size(): number {
    return this.counts.size;
  }

  /** Writes what was counted so far; one flush at a time. Never throws. */
  flush(): Promise<void> {
    return this.flusher.run();
  }

  close(): Promise<void> {
    return this.flusher.close();
  }

  private add(apiKeyId: number | null, reason: string, at: number, n: number): void {
    const windowStart = Math.floor(at / MINUTE_MS) * MINUTE_MS;
    let key = `${windowStart}|${reason}|${apiKeyId ?? ''}`;
    let entry = this.counts.get(key);
    if (!entry && apiKeyId !== null && this.counts.size >= this.maxEntries) {
      key = `${windowStart}|${reason}|`;
      entry = this.counts.get(key);
      apiKeyId = null;
    }
    if (entry) {
      entry.count += n;
      return;
    }
    // The entries under no client are few (a reason's per minute), but not unbounded while the
    // database is away for hours: past a slack they are tallied only.
    if (this.counts.size >= this.maxEntries + 1_000) {
      this.dropped += n;
      return;
    }
    this.counts.set(key, { apiKeyId, reason, windowStart, count: n });
  }

  private async write(): Promise<void> {
    if (this.nginx) {
      // Counted in the minute they are collected: nginx keeps no times, and a flush every few
      // seconds puts them at most that far from when they happened.
      const at = this.now();
      for (const c of await this.nginx.drainFailures()) this.add(c.apiKeyId, c.reason, at, c.count);
    }
    const batch = this.counts;
    this.counts = new Map();
    const dropped = this.dropped;
    this.dropped = 0;
    if (dropped > 0) {
      this.log.warn('authentication failures not counted (too many distinct at once)', { dropped });
    }
    if (batch.size === 0) return;
    const rows = [...batch.values()];
    try {
      await this.db.query(
        `INSERT INTO auth_failures (api_key_id, reason, window_start, count)
         SELECT * FROM unnest($1::bigint[], $2::text[], $3::timestamptz[], $4::bigint[])
         ON CONFLICT (window_start, reason, (COALESCE(api_key_id, 0)))
         DO UPDATE SET count = auth_failures.count + EXCLUDED.count`,
        [
          rows.map((r) => r.apiKeyId),
          rows.map((r) => r.reason),
          rows.map((r) => new Date(r.windowStart)),
          rows.map((r) => r.count),
        ],
      );
    } catch (err) {
      // Kept for the next flush (merged with what came since, within the same bounds).
      for (const r of rows) this.add(r.apiKeyId, r.reason, r.windowStart, r.count);
      this.log.warn('could not record authentication failure counts', {
        error: (err as Error).message,
      });
      return;
    }
    this.logSamples(batch);
  }

  private logSamples(batch: Map<string, Count>): void {
    const oldest = Math.floor(this.now() / MINUTE_MS) * MINUTE_MS - MINUTE_MS;
    for (const key of this.logged) {
      if (Number(key.slice(0, key.indexOf('|'))) < oldest) this.logged.delete(key);
    }
    for (const [key, r] of batch) {
      if (this.logged.has(key) || this.logged.size >= 2 * this.maxEntries) continue;
      this.logged.add(key);
      this.log.warn('authentication refused', {
        api_key_id: r.apiKeyId,
        reason: r.reason,
        window_start: new Date(r.windowStart).toISOString(),
        count: r.count,
      });
    }
  }
}
