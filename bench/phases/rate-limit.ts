import type { CpuSplit } from '../cpu-split.js';
import { BENCH_PATH } from '../stack/engine-session.js';
import { COUNT_STATUSES, MAX_RATE } from '../wrk/lua.js';
import { type Aggregate, aggregate } from './aggregate.js';
import { benchClient } from './bench-client.js';
import { type MeasuredRun, measure, type PhaseContext, type Target } from './context.js';

/** How long the accuracy run hammers a limit (the 10 s; 2 s in a --quick run). */
export const ACCURACY_SECONDS = 10;
const QUICK_ACCURACY_SECONDS = 2;

export interface RateLimitResult {
  /** The same client on gateway B: a limit it never reaches, and none. */
  limited: Aggregate;
  unlimited: Aggregate;
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

/**
 * Issue 22's rows on gateway B (static upstream): the hot-path cost of a rate limit, as one
 * client with a limit it never reaches against the same client with none (alternating rounds,
 * the limit changed by PUT through A between them and learnt by B through LISTEN), then how
 * many requests a client hammering a limit of a third of that rate gets through in 10 s.
 */
export async function measureRateLimits(ctx: PhaseContext): Promise<RateLimitResult> {
  const { b } = ctx.stack;
  const client = await benchClient(ctx, 'bench-rate-limit');
  const setLimit = (limit: { requests: number; per_seconds: number } | null) =>
    client.put({ rate_limit: limit });
  const target = (name: string): Target => ({
    name,
    url: `${b.url}${BENCH_PATH}`,
    headers: { Host: 'localhost', Authorization: `apk ${client.token}` },
    authenticatedByA: false,
  });
  const limitedTarget = target('fast limit unmet');
  const unlimitedTarget = target('fast no limit');
  const NEVER = { requests: 1_000_000_000, per_seconds: 1 };
  const runs = { limited: [] as MeasuredRun[], unlimited: [] as MeasuredRun[] };
  const one = async (limited: boolean, seconds: number) => {
    await setLimit(limited ? NEVER : null);
    const run = await measure(ctx, limited ? limitedTarget : unlimitedTarget, seconds, MAX_RATE);
    ctx.say(
      `  ${limited ? 'limit unmet' : 'no limit   '} ${Math.round(run.rps)} req/s, p99 ${run.p99.toFixed(2)} ms`,
    );
    return run;
  };
  // A quick run (the harness's smoke test) has no time for warm-ups of its own.
  if (!ctx.options.quick) {
    await one(true, ctx.options.warmupSeconds);
    await one(false, ctx.options.warmupSeconds);
  }
  for (let round = 0; round < ctx.options.rounds; round += 1) {
    for (const limited of round % 2 === 0 ? [true, false] : [false, true]) {
      (limited ? runs.limited : runs.unlimited).push(await one(limited, ctx.options.seconds));
    }
  }
  const unlimited = aggregate(unlimitedTarget.name, runs.unlimited);
  const limit = Math.max(50, Math.round(unlimited.rps / 3));
  await setLimit({ requests: limit, per_seconds: 1 });
  // Two seconds of the same hammering first: the measured run starts in steady state, not on
  // a fresh client's first (full) window.
  const hammer = target('fast at its limit');
  await measure(ctx, hammer, ctx.options.quick ? 1 : 2, COUNT_STATUSES);
  const seconds = ctx.options.quick ? QUICK_ACCURACY_SECONDS : ACCURACY_SECONDS;
  const run = await measure(ctx, hammer, seconds, COUNT_STATUSES);
  const statuses = run.statuses ?? {};
  ctx.say(
    `  limit ${limit}/s hammered for ${run.seconds.toFixed(1)} s: ${JSON.stringify(statuses)}`,
  );
  await setLimit(null);
  return {
    limited: aggregate(limitedTarget.name, runs.limited),
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
