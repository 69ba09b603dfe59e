import type { Queryable } from '../db/queryable.js';
import { SerialFlush } from '../db/serial-flush.js';
import type { Logger } from '../log.js';
import type { UsageCount, UsageSource } from '../nginx/usage-counts.js';

const MINUTE_MS = 60_000;

interface Minute {
  apiKeyId: number;
  windowStart: number;
  allowed: number;
  limited: number;
}

/**
 * Collects nginx's per-client request counts at a fixed interval and adds them to
 * `api_client_usage` per client and minute in one upsert, like the failure counts: traffic
 * changes counters, it writes no row per request. Whatever one collection brings is written,
 * however many clients it names (callers spread over 10⁶ keys name a few hundred thousand in a
 * flush). Counts that could not be written are kept for the next flush, up to `maxEntries`
 * (client, minute) pairs; beyond, they are dropped and logged in one line (the database has
 * then been away for long).
 */
export class UsageRecorder {
  private pending = new Map<string, Minute>();
  private readonly flusher: SerialFlush;

  constructor(
    private readonly db: Queryable,
    private readonly source: UsageSource,
    private readonly log: Logger,
    flushMs: number,
    private readonly maxEntries = 100_000,
  ) {
    this.flusher = new SerialFlush(() => this.write(), flushMs);
  }

  start(): void {
    this.flusher.start();
  }

  /** Collects and writes; one flush at a time. Never throws. */
  flush(): Promise<void> {
    return this.flusher.run();
  }

  close(): Promise<void> {
    return this.flusher.close();
  }

  private add(c: Pick<UsageCount, 'apiKeyId' | 'allowed' | 'limited'>, windowStart: number): void {
    const key = `${c.apiKeyId}|${windowStart}`;
    const entry = this.pending.get(key);
    if (entry) {
      entry.allowed += c.allowed;
      entry.limited += c.limited;
      return;
    }
    this.pending.set(key, { apiKeyId: c.apiKeyId, windowStart, ...pick(c) });
  }

  private async write(): Promise<void> {
    const used = new Map<number, number>();
    for (const c of await this.source.drainUsage()) {
      this.add(c, Math.floor(c.at / MINUTE_MS) * MINUTE_MS);
      if (c.allowed > 0) used.set(c.apiKeyId, Math.max(used.get(c.apiKeyId) ?? 0, c.at));
    }
    await this.touch(used);
    if (this.pending.size === 0) return;
    const rows = [...this.pending.values()];
    this.pending = new Map();
    try {
      await this.db.query(
        `INSERT INTO api_client_usage (api_key_id, window_start, allowed, limited)
         SELECT * FROM unnest($1::bigint[], $2::timestamptz[], $3::bigint[], $4::bigint[])
         ON CONFLICT (api_key_id, window_start) DO UPDATE
         SET allowed = api_client_usage.allowed + EXCLUDED.allowed,
             limited = api_client_usage.limited + EXCLUDED.limited`,
        [
          rows.map((r) => r.apiKeyId),
          rows.map((r) => new Date(r.windowStart)),
          rows.map((r) => r.allowed),
          rows.map((r) => r.limited),
        ],
      );
    } catch (err) {
      this.keep(rows, err as Error);
    }
  }

  /**
   * `last_used_at` of the clients nginx admitted (most decided by nginx alone, which the
   * sidecar's /auth never sees: issue 48), to the time of their last counted use (the counts'
   * generation, 5 s), in one UPDATE. Only where it is unset or more than a minute older, so a
   * client in use is written at most once a minute by each pair and never moved back; the
   * column is in no trigger's list, so this makes no change notice. A failure is logged: the
   * client's next counts write it.
   */
  private async touch(used: Map<number, number>): Promise<void> {
    if (used.size === 0) return;
    try {
      await this.db.query(
        `UPDATE api_clients AS c SET last_used_at = u.at
           FROM unnest($1::bigint[], $2::timestamptz[]) AS u(id, at)
          WHERE c.id = u.id
            AND (c.last_used_at IS NULL OR c.last_used_at < u.at - interval '1 minute')`,
        [[...used.keys()], [...used.values()].map((at) => new Date(at))],
      );
    } catch (err) {
      this.log.warn('could not record when clients were last used; their next counts will', {
        error: (err as Error).message,
        clients: used.size,
      });
    }
  }

  /** Rows a write failed for, back for the next flush: the first `maxEntries` of them. */
  private keep(rows: Minute[], err: Error): void {
    const dropped = { rows: 0, allowed: 0, limited: 0 };
    for (const r of rows) {
      if (
        this.pending.size < this.maxEntries ||
        this.pending.has(`${r.apiKeyId}|${r.windowStart}`)
      ) {
        this.add(r, r.windowStart);
        continue;
      }
      dropped.rows += 1;
      dropped.allowed += r.allowed;
      dropped.limited += r.limited;
    }
    this.log.warn('could not record request counts; kept for the next flush', {
      error: err.message,
      kept: this.pending.size,
    });
    if (dropped.rows > 0) {
      this.log.warn('request counts dropped (too many waiting for the database)', {
        clients_minutes: dropped.rows,
        allowed: dropped.allowed,
        limited: dropped.limited,
      });
    }
  }
}

function pick(c: { allowed: number; limited: number }) {
  return { allowed: c.allowed, limited: c.limited };
}
