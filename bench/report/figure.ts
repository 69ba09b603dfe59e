import type { CpuSplit } from '../cpu-split.js';
import type { Aggregate } from '../phases/aggregate.js';

/**
 * One line of the table: issue 7's figures with the engine behind the gateway, issue 10's with
 * a static responder (the fast rows), issue 23's miss path; each load group with its baseline
 * as a reference line.
 */
export interface Figure {
  id: FigureId;
  figure: string;
  /** NaN (null in JSON) when it could not be measured; such a row never passes. */
  measured: number;
  unit: string;
  target: string;
  /** null: a reference line without a target. */
  pass: boolean | null;
  rps: number | null;
  p50: number | null;
  p99: number | null;
  ratio: number | null;
  /**
   * Other processes on the machine used more than DISTURBED_CORES while this was measured:
   * the number is noise, whatever `pass` says.
   */
  disturbed: boolean;
  /** The most CPU other processes used during any run of this figure, in cores. */
  otherCores: number;
  note: string;
}

/** Every figure a run must produce; the smoke test checks for each. */
export const FIGURE_IDS = [
  'baseline',
  'apk_throughput',
  'apk_p99_added',
  'bearer_throughput',
  'first_request_p99',
  'fast_baseline',
  'fast_apk_throughput',
  'fast_apk_p99_added',
  'fast_apk_p99_added_max_rate',
  'fast_bearer_throughput',
  // Issue 38: in place of issue 23's never-seen row (fast_first_request_p99).
  'fast_created_first_request_p99',
  'fast_idle_chain_p99',
  'fast_bearer_first_sight_p99',
  'fast_cache_off_throughput',
  'fast_flood_ratio',
  'fast_first_request_during_list_p99',
  'fast_list_sidecar_rss_growth',
  'fast_distinct_keys_throughput',
  'fast_distinct_keys_large_throughput',
  'fast_balancer_flood_ratio',
  'fast_rate_limit_cost',
  'fast_rate_limit_accuracy',
  'fast_permissions_cost',
  // Issue 49: the fast API-key row over HTTP/2.
  'fast_h2_apk_throughput',
  'revocation_worst',
  'management_create_p50',
  'management_list',
  'sidecar_memory',
] as const;
export type FigureId = (typeof FIGURE_IDS)[number];

/** A row before the disturbance verdict: `other` is the most foreign CPU seen while measuring. */
export type RawFigure = Omit<Figure, 'disturbed' | 'otherCores'> & { other: number };

/** The most "other" CPU over the runs of aggregates (or plain splits). */
export function otherOf(...parts: (Aggregate | CpuSplit | null | undefined)[]): number {
  let most = 0;
  for (const part of parts) {
    if (!part) continue;
    const runs = (part as Aggregate).runs;
    const splits = Array.isArray(runs) ? runs.map((r) => r.cpu) : [part as CpuSplit];
    for (const cpu of splits) most = Math.max(most, Number(cpu?.other ?? 0));
  }
  return most;
}

/** The start of a note whose measurement saw errors or refusals: the number is not a result. */
export const invalid = (errors: number) =>
  errors > 0 ? `INVALID: ${errors} errors/refusals; ` : '';

/** The rows of a phase that failed: no number, never a pass. */
export function notMeasured(
  id: FigureId,
  figure: string,
  unit: string,
  target: string,
  why: string,
): RawFigure {
  return {
    id,
    other: 0,
    figure,
    measured: Number.NaN,
    unit,
    target,
    pass: false,
    rps: null,
    p50: null,
    p99: null,
    ratio: null,
    note: `NOT MEASURED: ${why}`,
  };
}
