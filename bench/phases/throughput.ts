import { MAX_RATE } from '../wrk/lua.js';
import { type Aggregate, aggregate } from './aggregate.js';
import {
  type MeasuredRun,
  measure,
  type PhaseContext,
  type Target,
  type TargetSet,
} from './context.js';

export interface ThroughputResult {
  baseline: Aggregate;
  apk: Aggregate;
  bearer: Aggregate;
  /** The same gateway with its decision cache off, when the set has it. */
  cacheOff?: Aggregate;
}

/**
 * Maximum rate of each target, wrk as fast as its connections allow. Rounds alternate the
 * order (baseline, apk, bearer, then the reverse), so drift on a shared machine (other
 * processes, CPU frequency) falls on every target alike. A warm-up run of each target first
 * (not counted): JIT in the sidecar and the engine, pools, the bearer key set, nginx caches.
 */
export async function measureThroughput(
  ctx: PhaseContext,
  t: TargetSet,
): Promise<ThroughputResult> {
  const order: Target[] = [t.baseline, t.apk, t.bearer, ...(t.cacheOff ? [t.cacheOff] : [])];
  for (const target of order) {
    const warm = await measure(ctx, target, ctx.options.warmupSeconds, MAX_RATE);
    ctx.say(`  warm-up ${target.name}: ${Math.round(warm.rps)} req/s`);
  }
  const runs = new Map<Target, MeasuredRun[]>(order.map((x) => [x, []]));
  for (let round = 0; round < ctx.options.rounds; round += 1) {
    for (const target of round % 2 === 0 ? order : [...order].reverse()) {
      const run = await measure(ctx, target, ctx.options.seconds, MAX_RATE);
      runs.get(target)!.push(run);
      ctx.say(
        `  round ${round + 1} ${target.name.padEnd(13)} ${Math.round(run.rps)} req/s, p50 ${run.p50.toFixed(2)} ms, p99 ${run.p99.toFixed(2)} ms`,
      );
    }
  }
  return {
    baseline: aggregate(t.baseline.name, runs.get(t.baseline)!),
    apk: aggregate(t.apk.name, runs.get(t.apk)!),
    bearer: aggregate(t.bearer.name, runs.get(t.bearer)!),
    ...(t.cacheOff ? { cacheOff: aggregate(t.cacheOff.name, runs.get(t.cacheOff)!) } : {}),
  };
}
