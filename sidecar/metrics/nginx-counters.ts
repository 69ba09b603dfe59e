import { Counter, Gauge } from 'prom-client';
import { LUA_COUNTERS } from '../../common/contract.js';
import { type LuaCounters, REFUSED_COUNTER, readLuaCounters } from '../nginx/counters.js';
import type { SidecarMetrics } from './sidecar-metrics.js';

// A 0/1 state, not a count: exported as a gauge (promtool wants counters to end in `_total`).
const GAUGES: ReadonlySet<string> = new Set(['module_off']);

// The Lua counters' keys (common/contract.ts) → their Prometheus names.
const NAMES: Record<keyof typeof LUA_COUNTERS, string> = {
  cache_hit: 'gateway_nginx_decision_cache_hits_total',
  cache_miss: 'gateway_nginx_decision_cache_misses_total',
  cache_eviction: 'gateway_nginx_decision_cache_evictions_total',
  cache_store_failed: 'gateway_nginx_decision_cache_store_failures_total',
  key_hit: 'gateway_nginx_key_record_accepted_total',
  module_hit: 'gateway_nginx_module_hits_total',
  module_off: 'gateway_nginx_module_off',
  key_refused: 'gateway_nginx_key_record_refused_total',
  module_copied: 'gateway_nginx_module_copied_total',
  module_nobody: 'gateway_nginx_module_nobody_total',
  budget_refused: 'gateway_nginx_failure_budget_refused_total',
  rate_limited: 'gateway_nginx_rate_limited_total',
  permission_refused: 'gateway_nginx_permission_refused_total',
  ambiguous_path_refused: 'gateway_nginx_ambiguous_path_refused_total',
};

/**
 * nginx's Lua counters, fetched from its control socket (`GET /metrics`, JSON) once per scrape
 * and shown as counters. When nginx does not answer, the last values it gave stay and
 * `gateway_nginx_up` is 0; nginx's counters restart from 0 with nginx (a counter reset).
 */
export function registerNginxCounters(metrics: SidecarMetrics, socketPath: string): void {
  let last: LuaCounters = {};
  let inflight: Promise<LuaCounters | null> | null = null;
  // Every counter below reads the same answer: one request to nginx per scrape.
  const read = (): Promise<LuaCounters | null> => {
    inflight ??= readLuaCounters(socketPath).finally(() => {
      inflight = null;
    });
    return inflight;
  };
  new Gauge({
    name: 'gateway_nginx_up',
    help: "1 when nginx's control socket answered this scrape with its counters, else 0.",
    registers: [metrics.registry],
    async collect() {
      const snapshot = await read();
      if (snapshot) last = snapshot;
      this.set(snapshot ? 1 : 0);
    },
  });
  for (const [key, name] of Object.entries(NAMES)) {
    const help = `nginx (Lua): ${LUA_COUNTERS[key as keyof typeof LUA_COUNTERS]}.`;
    if (GAUGES.has(key)) {
      new Gauge({
        name,
        help,
        registers: [metrics.registry],
        async collect() {
          this.set(((await read()) ?? last)[key] ?? 0);
        },
      });
      continue;
    }
    new Counter({
      name,
      help,
      registers: [metrics.registry],
      async collect() {
        const snapshot = (await read()) ?? last;
        this.reset();
        this.inc(snapshot[key] ?? 0);
      },
    });
  }
  new Counter({
    name: 'gateway_nginx_refusals_total',
    help: 'Requests nginx refused itself (its Lua code), by HTTP status; the sidecar refusals it relayed included.',
    labelNames: ['status'] as const,
    registers: [metrics.registry],
    async collect() {
      const snapshot = (await read()) ?? last;
      this.reset();
      for (const [key, value] of Object.entries(snapshot)) {
        const status = REFUSED_COUNTER.exec(key)?.[1];
        if (status) this.inc({ status }, value);
      }
    },
  });
}
