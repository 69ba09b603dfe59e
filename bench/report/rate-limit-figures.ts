import type { RateLimitResult } from '../phases/rate-limit.js';
import { round } from '../stats.js';
import { invalid, notMeasured, otherOf, type RawFigure } from './figure.js';
import type { Outcome } from './miss-path-figures.js';

/** Issue 22's targets: a limit costs at most 2 % of throughput; it holds within 2 %. */
const COST_RATIO_MIN = 0.98;
const ACCURACY_MAX = 0.02;

const COST = 'fast: API key with a rate limit it never reaches vs none';
const ACCURACY = 'fast: requests allowed under a limit, hammered 10 s (2 s quick), vs the limit';

/** Issue 22's rows, on gateway B with the static responder behind it. */
export function rateLimitFigures(result: Outcome<RateLimitResult>): RawFigure[] {
  if ('error' in result) {
    return [
      notMeasured('fast_rate_limit_cost', COST, 'ratio', `>= ${COST_RATIO_MIN}`, result.error),
      notMeasured(
        'fast_rate_limit_accuracy',
        ACCURACY,
        '%',
        `<= ${ACCURACY_MAX * 100} %`,
        result.error,
      ),
    ];
  }
  const { limited, unlimited, accuracy } = result;
  const ratio = limited.rps / unlimited.rps;
  const expected = accuracy.limit * accuracy.seconds;
  const off = Math.abs(accuracy.allowed - expected) / expected;
  const perRound = (runs: { rps: number }[]) => runs.map((r) => Math.round(r.rps)).join('/');
  return [
    {
      id: 'fast_rate_limit_cost',
      other: otherOf(limited, unlimited),
      figure: COST,
      measured: round(ratio, 3),
      unit: 'ratio',
      target: `>= ${COST_RATIO_MIN}`,
      pass: limited.errors + unlimited.errors === 0 && ratio >= COST_RATIO_MIN,
      rps: limited.rps,
      p50: limited.p50,
      p99: limited.p99,
      ratio: round(ratio, 3),
      note:
        `${invalid(limited.errors + unlimited.errors)}the same client, its limit set and removed ` +
        `by PUT between rounds: with ${Math.round(limited.rps)} req/s (${perRound(limited.runs)}), ` +
        `without ${Math.round(unlimited.rps)} req/s (${perRound(unlimited.runs)})`,
    },
    {
      id: 'fast_rate_limit_accuracy',
      // A client that cannot send for a while (a busy machine) leaves part of a window unused:
      // such a run says more about the machine than the limit.
      other: otherOf(accuracy.cpu),
      figure: ACCURACY,
      measured: round(off * 100, 2),
      unit: '%',
      target: `<= ${ACCURACY_MAX * 100} %`,
      pass: off <= ACCURACY_MAX,
      rps: null,
      p50: null,
      p99: null,
      ratio: null,
      note:
        `limit ${accuracy.limit} per second, ${accuracy.seconds.toFixed(2)} s after the same ` +
        `load: ${accuracy.allowed} allowed (expected ${Math.round(expected)}), ` +
        `${accuracy.refused} refused with 429`,
    },
  ];
}
