import type { CpuSplit } from '../cpu-split.js';
import { mean, round } from '../stats.js';
import { MAX_RATE } from '../wrk/lua.js';
import { errorCount } from '../wrk/run.js';
import { type MeasuredRun, measure, type PhaseContext, type Target } from './context.js';

/** A target's runs taken together. */
export interface Aggregate {
  target: string;
  /** All requests over all seconds of its measured runs. */
  rps: number;
  /** Means over the runs of each run's percentile (ms): wrk histograms cannot be merged here. */
  p50: number;
  p99: number;
  requests: number;
  /** Socket errors and answers > 399; a valid measurement has 0. */
  errors: number;
  /** Mean cores per process tree over the runs. */
  cpu: CpuSplit | null;
  runs: MeasuredRun[];
}

export function aggregate(target: string, runs: MeasuredRun[]): Aggregate {
  const requests = runs.reduce((a, r) => a + r.requests, 0);
  const seconds = runs.reduce((a, r) => a + r.seconds, 0);
  const cpus = runs.map((r) => r.cpu).filter((c): c is CpuSplit => c !== null);
  let cpu: CpuSplit | null = null;
  if (cpus.length > 0) {
    cpu = {};
    for (const name of Object.keys(cpus[0]!))
      cpu[name] = round(mean(cpus.map((c) => c[name] ?? 0)), 2);
  }
  return {
    target,
    rps: seconds > 0 ? requests / seconds : 0,
    p50: mean(runs.map((r) => r.p50)),
    p99: mean(runs.map((r) => r.p99)),
    requests,
    errors: runs.reduce((a, r) => a + errorCount(r), 0),
    cpu,
    runs,
  };
}

/**
 * Two targets at their maximum rate in alternating rounds (A B, then B A: slow drift on a
 * shared machine falls on both alike), each warmed up once first except in a quick run (the
 * smoke test has no time for it). `prepare` runs before each run of its target: a PUT that
 * gives the client what the target measures, or nothing.
 */
export async function alternate(
  ctx: PhaseContext,
  targets: [Target, Target],
  prepare: (target: Target) => Promise<void> = async () => {},
): Promise<[Aggregate, Aggregate]> {
  const runs: [MeasuredRun[], MeasuredRun[]] = [[], []];
  const one = async (i: 0 | 1, seconds: number) => {
    await prepare(targets[i]);
    const run = await measure(ctx, targets[i], seconds, MAX_RATE);
    ctx.say(
      `  ${targets[i].name.padEnd(18)} ${Math.round(run.rps)} req/s, p99 ${run.p99.toFixed(2)} ms`,
    );
    return run;
  };
  if (!ctx.options.quick) for (const i of [0, 1] as const) await one(i, ctx.options.warmupSeconds);
  for (let round = 0; round < ctx.options.rounds; round += 1) {
    for (const i of round % 2 === 0 ? ([0, 1] as const) : ([1, 0] as const)) {
      runs[i].push(await one(i, ctx.options.seconds));
    }
  }
  return [aggregate(targets[0].name, runs[0]), aggregate(targets[1].name, runs[1])];
}
