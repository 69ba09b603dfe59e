import { H2_REQUESTS_PER_CONNECTION } from '../h2load/run.js';
import { H2_CONNECTIONS, H2_STREAMS, type Http2Result } from '../phases/http2.js';
import { round } from '../stats.js';
import { invalid, notMeasured, otherOf, type RawFigure } from './figure.js';
import type { Outcome } from './miss-path-figures.js';

/** Issue 49's target: a seen API key over HTTP/2 keeps 95 % of auth off over HTTP/2. */
export const H2_RATIO_MIN = 0.95;

const FIGURE = 'fast: API key already seen over HTTP/2 ÷ baseline over HTTP/2 (h2load)';

/** Issue 49's row, on gateway B with the static responder behind it. */
export function http2Figure(result: Outcome<Http2Result>): RawFigure {
  if ('error' in result) {
    return notMeasured(
      'fast_h2_apk_throughput',
      FIGURE,
      'ratio',
      `>= ${H2_RATIO_MIN}`,
      result.error,
    );
  }
  const { baseline, apk, moduleHits } = result;
  const ratio = apk.rps / baseline.rps;
  const errors = baseline.errors + apk.errors;
  const perRound = (runs: { rps: number }[]) => runs.map((r) => Math.round(r.rps)).join('/');
  const hits =
    moduleHits === null
      ? 'module hits not read'
      : `${moduleHits} module hits counted for ${apk.requests} requests`;
  return {
    id: 'fast_h2_apk_throughput',
    other: otherOf(...[...apk.runs, ...baseline.runs].map((r) => r.cpu)),
    figure: FIGURE,
    measured: round(ratio),
    unit: 'ratio',
    target: `>= ${H2_RATIO_MIN}`,
    pass: errors === 0 && ratio >= H2_RATIO_MIN,
    rps: apk.rps,
    p50: null,
    p99: null,
    ratio: round(ratio),
    note:
      `${invalid(errors)}h2load -t1 -c${H2_CONNECTIONS} -m${H2_STREAMS}, each connection its ` +
      `${H2_REQUESTS_PER_CONNECTION} requests then closed by nginx (keepalive_requests): ` +
      `${Math.round(apk.rps)} req/s (${perRound(apk.runs)}) against ${Math.round(baseline.rps)} ` +
      `req/s (${perRound(baseline.runs)}); ${hits}`,
  };
}
