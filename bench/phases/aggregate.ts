import type { CpuSplit } from '../cpu-split.js';
import { mean, round } from '../stats.js';
import { errorCount } from '../wrk/run.js';
import type { MeasuredRun } from './context.js';

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
