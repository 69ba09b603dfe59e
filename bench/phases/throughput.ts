import { MAX_RATE } from '../wrk/lua.js';
import { type Aggregate, aggregate } from './aggregate.js';
import {
  type MeasuredRun,
  measure,
  type PhaseContext,
  type Target,
  type TargetSet,
} from './context.js';
import { type FloodSummary, floodLine, summariseFlood } from './flood.js';

export interface ThroughputResult {
  baseline: Aggregate;
  apk: Aggregate;
  bearer: Aggregate;
  /** The baseline with the bearer's header, when the set has it (the bearer row's reference). */
  bearerBaseline?: Aggregate;
  /** The same gateway with its decision cache off, when the set has it. */
  cacheOff?: Aggregate;
  /** `apk`'s traffic with the flood beside it, and the flood itself, when the set has it. */
  flooded?: Aggregate;
  flood?: FloodSummary;
}

/**
 * Maximum rate of each target, wrk as fast as its connections allow. Rounds alternate the
 * order (baseline, apk, bearer, cache off, apk beside the flood, then the reverse), so drift
 * on a shared machine (other processes, CPU frequency) falls on every target alike. A warm-up run of each target first
 * (not counted): JIT in the sidecar and the engine, pools, the bearer key set, nginx caches.
 */
export async function measureThroughput(
  ctx: PhaseContext,
  t: TargetSet,
): Promise<ThroughputResult> {
  const optional = [t.cacheOff, t.flooded].filter((x): x is Target => x !== undefined);
  const order: Target[] = [
    t.baseline,
    t.apk,
    ...(t.bearerBaseline ? [t.bearerBaseline] : []),
    t.bearer,
    ...optional,
  ];
  for (const target of order) {
    const warm = await measure(ctx, target, ctx.options.warmupSeconds, MAX_RATE);
    ctx.say(`  warm-up ${target.name}: ${Math.round(warm.rps)} req/s${floodLine(warm)}`);
  }
  const runs = new Map<Target, MeasuredRun[]>(order.map((x) => [x, []]));
  for (let round = 0; round < ctx.options.rounds; round += 1) {
    for (const target of round % 2 === 0 ? order : [...order].reverse()) {
      const run = await measure(ctx, target, ctx.options.seconds, MAX_RATE);
      runs.get(target)!.push(run);
      ctx.say(
        `  round ${round + 1} ${target.name.padEnd(14)} ${Math.round(run.rps)} req/s, p50 ${run.p50.toFixed(2)} ms, p99 ${run.p99.toFixed(2)} ms${floodLine(run)}`,
      );
    }
  }
  const of = (x: Target) => aggregate(x.name, runs.get(x)!);
  const flooded = t.flooded && runs.get(t.flooded)!;
  return {
    baseline: of(t.baseline),
    apk: of(t.apk),
    bearer: of(t.bearer),
    ...(t.bearerBaseline ? { bearerBaseline: of(t.bearerBaseline) } : {}),
    ...(t.cacheOff ? { cacheOff: of(t.cacheOff) } : {}),
    ...(t.flooded && flooded
      ? { flooded: of(t.flooded), flood: summariseFlood(flooded.map((r) => r.flood!)) }
      : {}),
  };
}
