import { join } from 'node:path';
import { type RunningRedis, startRedis } from '../../test/support/redis-server.js';
import type { CpuSplit } from '../cpu-split.js';
import { type Balancer, startBalancer } from '../stack/balancer.js';
import { type BenchGateway, startGateway } from '../stack/gateway.js';
import { COUNT_STATUSES } from '../wrk/lua.js';
import { benchClient } from './bench-client.js';
import { apkTarget, measure, type PhaseContext } from './context.js';
import { type LimitCost, measureLimitCost } from './rate-limit.js';

/** Issue 51's hammered limit, and how long it is hammered (after one untimed window). */
export const FLEET_LIMIT = { requests: 100, per_seconds: 10 };
export const FLEET_SECONDS = 60;
const QUICK_FLEET_SECONDS = 5;
/**
 * RATE_LIMITS_SYNC_MS of the fleet: the interval trades accuracy for Redis load (the bound is
 * the admitting rate × 2 intervals, docs/decisions/20261202-global-rate-limits.md); 200 ms as
 * test/e2e/global-rate-limits.test.ts runs it, not the default 1000.
 */
export const FLEET_SYNC_MS = 200;

export type Store = 'redis' | 'local';

/** One client hammered through HAProxy across the three pairs, with one store. */
export interface Hammered {
  store: Store;
  seconds: number;
  allowed: number;
  refused: number;
  statuses: Record<string, number>;
  cpu: CpuSplit | null;
}

export interface GlobalLimitsResult {
  /** A limit never reached ÷ none, on the first pair with RATE_LIMITS_STORE=redis. */
  cost: LimitCost;
  limit: typeof FLEET_LIMIT;
  syncMs: number;
  redis: Hammered;
  local: Hammered;
}

/**
 * Issue 51's rows: three native pairs (nginx + sidecar, the static responder as their app) on
 * the bench's PostgreSQL and one Redis (Debian's redis-server, test/support/redis-server.ts),
 * started for this phase only and stopped after it. First the cost of a limit never reached on
 * one pair with the Redis store (rate-limit.ts's phase); then one client limited to 100 per
 * 10 s, hammered by wrk through HAProxy (balancer.ts, round robin over the pairs) for 60 s
 * after one untimed window; then the same pairs restarted with RATE_LIMITS_STORE=local and the
 * same hammering, where each pair enforces the limit alone (about 3 × the limit).
 */
export async function measureGlobalLimits(ctx: PhaseContext): Promise<GlobalLimitsResult> {
  const redis = await startRedis();
  ctx.extraRoots.redis = redis.pid();
  let pairs: BenchGateway[] = [];
  let balancer: Balancer | undefined;
  const stop = async () => {
    await balancer?.stop();
    await Promise.all(pairs.map((p) => p.stop()));
    for (const key of Object.keys(ctx.extraRoots))
      if (/^(pair|haproxy)/.test(key)) delete ctx.extraRoots[key];
    pairs = [];
  };
  try {
    const ports: number[] = [];
    const client = await benchClient(ctx, 'bench-fleet-limit');
    const start = async (store: Store) => {
      pairs = await startPairs(ctx, store, redis, ports);
      ports.splice(0, 3, ...pairs.map((p) => p.port));
      balancer = await startBalancer(ctx.stack.dir, pairs, ctx.say);
      ctx.extraRoots.haproxy = balancer.pid;
      ctx.say(`  3 pairs (RATE_LIMITS_STORE=${store}) behind ${balancer.url}`);
    };
    const hammer = async (store: Store): Promise<Hammered> => {
      await client.put({ rate_limit: FLEET_LIMIT });
      const target = apkTarget(`fleet ${store}`, balancer!.url, client.token);
      const quick = ctx.options.quick;
      await measure(ctx, target, quick ? 2 : FLEET_LIMIT.per_seconds, COUNT_STATUSES);
      const run = await measure(
        ctx,
        target,
        quick ? QUICK_FLEET_SECONDS : FLEET_SECONDS,
        COUNT_STATUSES,
      );
      const statuses = run.statuses ?? {};
      ctx.say(`  ${store}: hammered ${run.seconds.toFixed(1)} s: ${JSON.stringify(statuses)}`);
      await client.put({ rate_limit: null });
      const [allowed, refused] = [statuses['200'] ?? 0, statuses['429'] ?? 0];
      return { store, seconds: run.seconds, allowed, refused, statuses, cpu: run.cpu };
    };
    await start('redis');
    const cost = await measureLimitCost(ctx, pairs[0]!, client, 'fleet');
    const onRedis = await hammer('redis');
    await stop();
    await start('local');
    const onLocal = await hammer('local');
    return { cost, limit: FLEET_LIMIT, syncMs: FLEET_SYNC_MS, redis: onRedis, local: onLocal };
  } finally {
    await stop();
    await redis.stop();
    delete ctx.extraRoots.redis;
  }
}

/** Three native pairs on the bench's database, each on the port it had before (restarts). */
async function startPairs(
  ctx: PhaseContext,
  store: Store,
  redis: RunningRedis,
  ports: number[],
): Promise<BenchGateway[]> {
  const { db, oidc, fast } = ctx.stack;
  const started = await Promise.allSettled(
    [0, 1, 2].map((i) =>
      startGateway({
        name: `pair ${i + 1}`,
        home: join(ctx.stack.dir, `p${i + 1}`),
        databaseUrl: db.url,
        createKey: false,
        engineAdminPassword: 'unused (no engine)',
        ...(ports[i] === undefined ? {} : { port: ports[i] }),
        env: {
          ...oidc.gatewayEnv,
          GATEWAY_APP_UPSTREAM: fast.responder.upstream,
          RATE_LIMITS_STORE: store,
          RATE_LIMITS_REDIS_URL: redis.url,
          RATE_LIMITS_SYNC_MS: String(FLEET_SYNC_MS),
        },
      }),
    ),
  );
  const pairs = started.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
  const failed = started.find((s) => s.status === 'rejected');
  if (failed) {
    await Promise.all(pairs.map((p) => p.stop()));
    throw (failed as PromiseRejectedResult).reason;
  }
  for (const p of pairs) {
    ctx.extraRoots[`${p.name} runner`] = p.pids.runner;
    ctx.extraRoots[`${p.name} nginx`] = p.pids.nginx;
    ctx.extraRoots[`${p.name} sidecar`] = p.pids.sidecar;
  }
  return pairs;
}
