import { Redis } from 'ioredis';
import { Counter, Gauge } from 'prom-client';
import { CONTROL } from '../../common/contract.js';
import type { Logger } from '../log.js';
import type { RateLimitStoreReport } from '../metrics/readiness.js';
import type { SidecarMetrics } from '../metrics/sidecar-metrics.js';
import { readControlSocket } from '../nginx/control-socket.js';
import {
  deltas,
  injections,
  LIVE_SET,
  parseHeld,
  parseWindowKey,
  redisKey,
  type WindowState,
  windowEnd,
} from './fleet-windows.js';
import type { OverAdmissionMeter } from './over-admission-meter.js';
import { clearStoreFlagAtStart, closedRetryAfterSeconds, tellStoreFlag } from './store-flag.js';
import type { RateLimitStoreSettings } from './store-settings.js';

const MAX_BODY = 16 * 1024 * 1024;

/**
 * rate_limits.store redis: every sync interval, this pair's window counts since the last push
 * go to Redis in one pipeline (INCRBY, PEXPIREAT, ZADD to the live set), the fleet's totals of
 * every live window come back (MGET), and nginx's windows are made to hold them through the
 * control socket (docs/decisions/20261202-global-rate-limits.md). Redis away: nothing is
 * pushed (the counts wait for Redis back), nginx enforces on what it holds (`local`), or, with
 * `closed`, nginx's store flag is set at every failed sync (and from the start until the first
 * that works), cleared with the counts of the next that works (store-flag.ts); one log line and
 * a metric per transition. Each sync's totals also go to the over-admission meter
 * (over-admission-meter.ts). Never throws.
 */
export class FleetSync {
  private readonly redis: Redis;
  private readonly states = new Map<string, WindowState>();
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private up: boolean | null = null;
  private lastSyncMs = 0;
  /** closed: whether nginx may hold the flag set (it is set from the start). */
  private flagHeld: boolean;
  private stopClear: (() => void) | null = null;
  private stopped = false;
  private readonly upGauge: Gauge;
  private readonly transitions: Counter<'to'>;

  constructor(
    private readonly settings: RateLimitStoreSettings,
    private readonly socketPath: string,
    private readonly log: Logger,
    metrics: SidecarMetrics,
    private readonly clock: () => number = Date.now,
    /** Counts what the fleet admitted over the limits, from each sync's totals. */
    private readonly overAdmission: OverAdmissionMeter | null = null,
  ) {
    this.redis = new Redis(settings.redisUrl, {
      lazyConnect: true,
      // Fail fast while Redis is away (nginx enforces locally meanwhile); it reconnects alone.
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      commandTimeout: settings.syncMs,
      retryStrategy: (times) => Math.min(times * 200, 2000),
    });
    this.redis.on('error', () => {});
    this.flagHeld = settings.onFailure === 'closed';
    this.upGauge = new Gauge({
      name: 'gateway_rate_limit_store_up',
      help: '1 while the last sync with the rate limit store (Redis) worked; 0 when it failed.',
      registers: [metrics.registry],
    });
    this.transitions = new Counter({
      name: 'gateway_rate_limit_store_transitions_total',
      help: 'Times the rate limit store (Redis) went away (to="down") or came back (to="up").',
      labelNames: ['to'] as const,
      registers: [metrics.registry],
    });
    const lag = () => this.syncLagSeconds;
    new Gauge({
      name: 'gateway_rate_limit_store_sync_lag_seconds',
      help: 'Seconds since the last sync with the rate limit store worked (-1: none yet).',
      registers: [metrics.registry],
      collect() {
        this.set(lag());
      },
    });
  }

  /** Whether the last sync worked (null: none tried yet); readiness reports it. */
  get storeUp(): boolean | null {
    return this.up;
  }

  /** Seconds since the last sync that worked; -1: none yet. */
  get syncLagSeconds(): number {
    return this.lastSyncMs === 0 ? -1 : (this.clock() - this.lastSyncMs) / 1000;
  }

  /** The store's state as readiness reports it. */
  report(): RateLimitStoreReport {
    return {
      up: this.up,
      syncLagSeconds: this.syncLagSeconds,
      overAdmitted: this.overAdmission?.overAdmitted ?? 0,
    };
  }

  start(): void {
    this.redis.connect().catch(() => {});
    const tick = () => {
      this.running = this.sync().finally(() => {
        this.running = null;
        if (this.timer) this.timer = setTimeout(tick, this.settings.syncMs);
      });
    };
    const begin = () => {
      if (!this.stopped) this.timer = setTimeout(tick, this.settings.syncMs);
    };
    if (!this.flagHeld) {
      this.stopClear = clearStoreFlagAtStart(this.socketPath);
      begin();
      return;
    }
    // closed: no limited request passes until the first sync has brought the fleet's counts.
    // Set before the first sync starts, so that it cannot land after that sync cleared it.
    this.running = this.close(false).finally(() => {
      this.running = null;
      begin();
    });
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.stopClear?.();
    await this.running;
    await this.overAdmission?.idle();
    this.redis.disconnect();
  }

  /** One exchange: nginx's counts, Redis's totals, nginx's windows made to hold them. */
  async sync(): Promise<void> {
    const read = await readControlSocket(
      this.socketPath,
      CONTROL.limits,
      'POST',
      2000,
      MAX_BODY,
      '',
    );
    if (read === null || read.status !== 200) return;
    const nowMs = this.clock();
    const nowS = nowMs / 1000;
    const changed = deltas(parseHeld(read.text), this.states, nowS);
    let totals: Map<string, number>;
    try {
      totals = await this.exchange(changed, nowMs);
    } catch (err) {
      this.transition(false, err);
      // Set again at every failed sync, not only the first: an nginx restarted meanwhile (or
      // its dict short of room) lost it.
      if (this.settings.onFailure === 'closed') await this.close();
      return;
    }
    this.transition(true);
    for (const c of changed) this.states.get(c.window.key)!.pushed = c.local;
    const lines = injections(totals, this.states, nowS);
    this.lastSyncMs = nowMs;
    this.overAdmission?.observe(totals, nowS);
    if (lines.length === 0 && !this.flagHeld) return;
    const body = lines.length === 0 ? '' : `${lines.join('\n')}\n`;
    // The flag is cleared in the same request as the counts, after them: nginx never admits on
    // a window the fleet's counts are not in yet.
    const path = this.flagHeld ? `${CONTROL.limits}?list=0&closed=0` : `${CONTROL.limits}?list=0`;
    const wrote = await readControlSocket(this.socketPath, path, 'POST', 2000, MAX_BODY, body);
    if (wrote === null || wrote.status !== 200) {
      this.log.warn('nginx did not take the fleet rate limit counts', { status: wrote?.status });
      return;
    }
    this.flagHeld = false;
  }

  /**
   * closed: nginx's flag set; held from then on, whether nginx took it or not (at start nginx
   * may not be up yet, and nothing is said: the first sync that fails sets it again).
   */
  private async close(warn = true): Promise<void> {
    this.flagHeld = true;
    const took = await tellStoreFlag(
      this.socketPath,
      closedRetryAfterSeconds(this.settings.syncMs),
    );
    if (!took && warn) this.log.warn('nginx did not take the rate limit store flag (closed)');
  }

  /** Deltas in, the fleet's totals of every live window out: two pipelined round trips. */
  private async exchange(
    changed: ReturnType<typeof deltas>,
    nowMs: number,
  ): Promise<Map<string, number>> {
    const p = this.redis.pipeline();
    for (const { window, delta } of changed) {
      if (delta === 0) continue;
      const endMs = windowEnd(window) * 1000;
      p.incrby(redisKey(window), delta);
      p.pexpireat(redisKey(window), endMs);
      p.zadd(LIVE_SET, endMs, window.key);
    }
    p.zremrangebyscore(LIVE_SET, '-inf', nowMs);
    p.zrangebyscore(LIVE_SET, `(${nowMs}`, '+inf');
    const results = await p.exec();
    if (!results) throw new Error('no answer from Redis');
    for (const [err] of results) if (err) throw err;
    const live = (results[results.length - 1]![1] as string[]).filter((k) => parseWindowKey(k));
    const keys = new Set([...live, ...changed.map((c) => c.window.key)]);
    const list = [...keys];
    const totals = new Map<string, number>();
    if (list.length === 0) return totals;
    const values = await this.redis.mget(...list.map((k) => redisKey(parseWindowKey(k)!)));
    for (const [i, k] of list.entries()) totals.set(k, Number(values[i] ?? 0));
    return totals;
  }

  private transition(up: boolean, err?: unknown): void {
    this.upGauge.set(up ? 1 : 0);
    if (this.up === up) return;
    const first = this.up === null;
    this.up = up;
    if (up) {
      if (!first) this.transitions.inc({ to: 'up' });
      this.log.info('rate limit store reachable: limits are counted across the fleet', {
        store: 'redis',
      });
    } else {
      this.transitions.inc({ to: 'down' });
      const closed = this.settings.onFailure === 'closed';
      this.log.error(
        closed
          ? 'rate limit store unreachable: no request of a rate-limited client passes (on_failure closed)'
          : 'rate limit store unreachable: each pair enforces the whole limit alone',
        {
          store: 'redis',
          on_failure: this.settings.onFailure,
          error: err instanceof Error ? err.message : String(err),
        },
      );
    }
  }
}
