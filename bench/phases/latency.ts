import { median } from '../stats.js';
import { FIXED_RATE } from '../wrk/lua.js';
import { type Aggregate, aggregate } from './aggregate.js';
import { type MeasuredRun, measure, type PhaseContext, type TargetSet } from './context.js';

export interface LatencyResult {
  /** The fixed rate both targets were driven at: half the gateway's maximum API-key rate. */
  rate: number;
  baseline: Aggregate;
  apk: Aggregate;
  /** Median over rounds of the gateway's p99 minus the same median of the baseline's, ms. */
  addedP99: number;
}

/**
 * p99 at half of the gateway's maximum rate, for the baseline and the gateway at the SAME
 * rate (see FIXED_RATE in wrk/lua.ts for how wrk holds it), rounds alternating.
 */
export async function measureLatency(
  ctx: PhaseContext,
  t: TargetSet,
  maxRps: number,
): Promise<LatencyResult> {
  const rate = maxRps / 2;
  const intervalMs = (ctx.options.wrkThreads * 1000) / rate;
  const runs: Record<'baseline' | 'apk', MeasuredRun[]> = { baseline: [], apk: [] };
  for (let round = 0; round < ctx.options.latencyRounds; round += 1) {
    const order = round % 2 === 0 ? (['baseline', 'apk'] as const) : (['apk', 'baseline'] as const);
    for (const which of order) {
      const run = await measure(ctx, t[which], ctx.options.latencySeconds, FIXED_RATE, [
        intervalMs.toFixed(4),
      ]);
      runs[which].push(run);
      ctx.say(
        `  round ${round + 1} ${t[which].name.padEnd(13)} at ${Math.round(rate)} req/s: got ${Math.round(run.rps)} req/s, p50 ${run.p50.toFixed(2)} ms, p99 ${run.p99.toFixed(2)} ms`,
      );
    }
  }
  const baseline = {
    ...aggregate(t.baseline.name, runs.baseline),
    p99: median(runs.baseline.map((r) => r.p99)),
  };
  const apk = { ...aggregate(t.apk.name, runs.apk), p99: median(runs.apk.map((r) => r.p99)) };
  return { rate, baseline, apk, addedP99: apk.p99 - baseline.p99 };
}
