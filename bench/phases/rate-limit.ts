import type { CpuSplit } from '../cpu-split.js';
import type { BenchGateway } from '../stack/gateway.js';
import { COUNT_STATUSES } from '../wrk/lua.js';
import { type Aggregate, alternate } from './aggregate.js';
import { type BenchClient, benchClient } from './bench-client.js';
import { apkTarget, measure, type PhaseContext } from './context.js';

/** How long the accuracy run hammers a limit (the 10 s; 2 s in a --quick run). */
export const ACCURACY_SECONDS = 10;
const QUICK_ACCURACY_SECONDS = 2;

/** The same client on one gateway: a limit it never reaches, and none. */
export interface LimitCost {
  limited: Aggregate;
  unlimited: Aggregate;
}

export interface RateLimitResult extends LimitCost {
  accuracy: {
    /** requests per second of the limit, and the 200s and 429s of the run. */
    limit: number;
    seconds: number;
    allowed: number;
    refused: number;
    /** Cores per process tree during the run (other processes' share marks it disturbed). */
    cpu: CpuSplit | null;
  };
}

const NEVER = { requests: 1_000_000_000, per_seconds: 1 };

/**
 * The hot-path cost of a rate limit on `gateway`: one client with a limit it never reaches
 * against the same client with none, in alternating rounds, the limit changed by PUT through A
 * between them and learnt by the gateway through LISTEN. Issue 22's row on B (the local
 * store), issue 51's on a pair of the Redis fleet (global-limits.ts).
 */
export async function measureLimitCost(
  ctx: PhaseContext,
  gateway: BenchGateway,
  client: BenchClient,
  label: string,
): Promise<LimitCost> {
  const target = (name: string) => apkTarget(name, gateway.url, client.token);
  const limited = target(`${label} limit unmet`);
  const [withLimit, without] = await alternate(ctx, [limited, target(`${label} no limit`)], (t) =>
    client.put({ rate_limit: t === limited ? NEVER : null }),
  );
  return { limited: withLimit, unlimited: without };
}

/**
 * Issue 22's rows on gateway B (static upstream): the cost of a limit never reached
 * (measureLimitCost), then how many requests a client hammering a limit of a third of that
 * rate gets through in 10 s.
 */
export async function measureRateLimits(ctx: PhaseContext): Promise<RateLimitResult> {
  const { b } = ctx.stack;
  const client = await benchClient(ctx, 'bench-rate-limit');
  const { limited, unlimited } = await measureLimitCost(ctx, b, client, 'fast');
  const limit = Math.max(50, Math.round(unlimited.rps / 3));
  await client.put({ rate_limit: { requests: limit, per_seconds: 1 } });
  // Two seconds of the same hammering first: the measured run starts in steady state, not on
  // a fresh client's first (full) window.
  const hammer = apkTarget('fast at its limit', b.url, client.token);
  await measure(ctx, hammer, ctx.options.quick ? 1 : 2, COUNT_STATUSES);
  const seconds = ctx.options.quick ? QUICK_ACCURACY_SECONDS : ACCURACY_SECONDS;
  const run = await measure(ctx, hammer, seconds, COUNT_STATUSES);
  const statuses = run.statuses ?? {};
  ctx.say(
    `  limit ${limit}/s hammered for ${run.seconds.toFixed(1)} s: ${JSON.stringify(statuses)}`,
  );
  await client.put({ rate_limit: null });
  return {
    limited,
    unlimited,
    accuracy: {
      limit,
      seconds: run.seconds,
      allowed: statuses['200'] ?? 0,
      refused: statuses['429'] ?? 0,
      cpu: run.cpu,
    },
  };
}
