import type pg from 'pg';
import { type SidecarMetrics, scrapedGauge } from './sidecar-metrics.js';

/**
 * Pool use (connections open and idle, requests waiting for one) read at scrape time, and the
 * time of every query on the pools' connections, whether run by `pool.query` or on a checked
 * out client (transactions, streamed lists).
 */
export function instrumentPools(metrics: SidecarMetrics, pools: Record<string, pg.Pool>): void {
  const entries = Object.entries(pools);
  scrapedGauge(
    metrics.registry,
    'gateway_db_pool_connections',
    'Connections of a PostgreSQL pool, by state: total (open) and idle.',
    ['pool', 'state'],
    () =>
      entries.flatMap(([pool, p]) => [
        { labels: { pool, state: 'total' }, value: p.totalCount },
        { labels: { pool, state: 'idle' }, value: p.idleCount },
      ]),
  );
  scrapedGauge(
    metrics.registry,
    'gateway_db_pool_waiting',
    'Requests waiting for a connection of a PostgreSQL pool.',
    ['pool'],
    () => entries.map(([pool, p]) => ({ labels: { pool }, value: p.waitingCount })),
  );
  for (const [pool, p] of entries) {
    const histogram = metrics.queryDuration.labels({ pool });
    p.on('connect', (client) => timeQueries(client, (seconds) => histogram.observe(seconds)));
  }
}

type QueryFn = (...args: unknown[]) => unknown;

/** Wraps one client's `query` so each call reports its duration once, however it is called. */
function timeQueries(client: pg.PoolClient, observe: (seconds: number) => void): void {
  const original = client.query.bind(client) as QueryFn;
  const timed: QueryFn = (...args) => {
    const started = performance.now();
    let reported = false;
    const done = () => {
      if (reported) return;
      reported = true;
      observe((performance.now() - started) / 1000);
    };
    const last = args.at(-1);
    // pg-pool's own pool.query passes a callback.
    if (typeof last === 'function') {
      args[args.length - 1] = (...results: unknown[]) => {
        done();
        return (last as QueryFn)(...results);
      };
      return original(...args);
    }
    const result = original(...args) as {
      then?: (ok: () => void, fail: () => void) => void;
      once?: (event: string, fn: () => void) => void;
    };
    // A promise (the usual case), or a submittable (a cursor) that ends or fails.
    if (typeof result?.then === 'function') result.then(done, done);
    else if (typeof result?.once === 'function') {
      result.once('end', done);
      result.once('error', done);
    }
    return result;
  };
  (client as unknown as { query: QueryFn }).query = timed;
}
