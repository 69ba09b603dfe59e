import type { CpuSplit } from '../cpu-split.js';
import type { DuringListResult } from '../phases/first-sight-during-list.js';
import { FLOOD_CONNECTIONS } from '../phases/flood.js';
import type { IdleChainResult } from '../phases/idle-chain.js';
import type { ThroughputResult } from '../phases/throughput.js';
import { round } from '../stats.js';
import { invalid, notMeasured, otherOf, type RawFigure } from './figure.js';

/** Issue 23's targets. */
const P99_ADDED_MAX_RATE_MS = 0.5;
const FLOOD_RATIO_MIN = 0.8;
const DURING_LIST_P99_MS = 10;
const LIST_RSS_GROWTH_MB = 50;

/** What a phase gives when it threw: its rows say why instead of a number. */
export type Outcome<T> = T | { error: string };

/**
 * Issue 23's rows, all on gateway B with the static responder behind it: the p99 the gateway
 * adds at full load, seen-key traffic under a flood of wrong secrets, and a never-seen key
 * while every client is listed.
 */
export function missPathFigures(
  fast: ThroughputResult,
  duringList: Outcome<DuringListResult>,
  duringListCpu: CpuSplit | null,
  idleChain: Outcome<IdleChainResult>,
  chainCpu: CpuSplit | null,
): RawFigure[] {
  return [
    idleChainFigure(idleChain, chainCpu),
    p99AtMaxRate(fast),
    floodFigure(fast),
    ...duringListFigures(duringList, duringListCpu),
  ];
}

/**
 * A reference line beside the never-seen row: the p99 of a round trip through as many idle
 * processes as a first sight wakes, on this machine, just before that row is measured. Not a
 * strict floor: nginx and PostgreSQL hop more cheaply than a Node relay, and a p99 of a few
 * hundred samples moves by a millisecond between runs. But it meets the same scheduler with
 * the same number of wake-ups, and no gateway code at all.
 */
function idleChainFigure(idleChain: Outcome<IdleChainResult>, cpu: CpuSplit | null): RawFigure {
  const figure = "fast: 4 idle relays, no gateway (a first sight's 8 wake-ups): p99";
  if ('error' in idleChain)
    return notMeasured('fast_idle_chain_p99', figure, 'ms', '(reference)', idleChain.error);
  const { firstSight, seen } = idleChain;
  return {
    id: 'fast_idle_chain_p99',
    other: otherOf(cpu),
    figure,
    measured: round(firstSight.p99),
    unit: 'ms',
    target: '(reference)',
    pass: null,
    rps: null,
    p50: firstSight.p50,
    p99: firstSight.p99,
    ratio: null,
    note:
      `${idleChain.roundTrips} round trips of 200 bytes, one at a time, through Node relays on unix ` +
      `sockets that do nothing, max ${firstSight.max.toFixed(2)} ms; 2 relays (a seen key's 4 ` +
      `wake-ups): p50 ${seen.p50.toFixed(2)} ms, p99 ${seen.p99.toFixed(2)} ms`,
  };
}

/** From the throughput runs themselves: both p99s are the rows' own (mean of rounds). */
function p99AtMaxRate({ baseline, apk }: ThroughputResult): RawFigure {
  const added = apk.p99 - baseline.p99;
  const perRound = (runs: { p99: number }[]) => runs.map((r) => r.p99.toFixed(2)).join('/');
  return {
    id: 'fast_apk_p99_added_max_rate',
    other: otherOf(baseline, apk),
    figure: 'fast: API key: p99 added at maximum rate',
    measured: round(added),
    unit: 'ms',
    target: `<= ${P99_ADDED_MAX_RATE_MS} ms`,
    pass: apk.errors + baseline.errors === 0 && added <= P99_ADDED_MAX_RATE_MS,
    rps: apk.rps,
    p50: apk.p50,
    p99: apk.p99,
    ratio: null,
    note:
      `${invalid(apk.errors + baseline.errors)}the throughput rows' runs, mean of ` +
      `${apk.runs.length} rounds' p99: baseline ${baseline.p99.toFixed(2)} ms at ` +
      `${Math.round(baseline.rps)} req/s, gateway ${apk.p99.toFixed(2)} ms at ` +
      `${Math.round(apk.rps)} req/s; per round baseline ${perRound(baseline.runs)}, gateway ` +
      `${perRound(apk.runs)} ms`,
  };
}

function floodFigure({ apk, flooded, flood }: ThroughputResult): RawFigure {
  const figure = 'fast: API key, seen, under a flood of wrong secrets vs alone';
  if (!flooded || !flood)
    return notMeasured(
      'fast_flood_ratio',
      figure,
      'ratio',
      `>= ${FLOOD_RATIO_MIN.toFixed(2)}`,
      'no run',
    );
  const ratio = flooded.rps / apk.rps;
  // The valid traffic's refusals are wrk's count (answers > 399, socket errors): the static
  // responder answers only 200, so nothing else non-2xx can reach it. No response() callback
  // in the valid traffic's script: it is the same pre-built-request run as the API-key row.
  const validErrors = apk.errors + flooded.errors;
  const failed =
    flood.failed.length > 0 ? `INVALID: not flooded throughout: ${flood.failed.join('; ')}; ` : '';
  const others = Object.entries(flood.statuses)
    .filter(([status]) => status !== '401' && status !== '429')
    .map(([status, n]) => `${status}: ${n}`)
    .join(', ');
  return {
    id: 'fast_flood_ratio',
    other: otherOf(apk, flooded),
    figure,
    measured: round(ratio),
    unit: 'ratio',
    target: `>= ${FLOOD_RATIO_MIN.toFixed(2)}`,
    pass: validErrors === 0 && flood.failed.length === 0 && ratio >= FLOOD_RATIO_MIN,
    rps: flooded.rps,
    p50: flooded.p50,
    p99: flooded.p99,
    ratio,
    note:
      `${invalid(validErrors)}${failed}valid traffic (the API-key row's key, rounds alternating): ` +
      `alone ${Math.round(apk.rps)} req/s, with the flood ${Math.round(flooded.rps)} req/s, ` +
      `${validErrors} non-2xx; flood (second wrk, -t1 -c${FLOOD_CONNECTIONS}, a new random ` +
      `secret per request for the same client id): ${Math.round(flood.rps)} req/s, ` +
      `${flood.requests} answers: 401 ${flood.refused401}, 429 ${flood.refused429}, ` +
      `other ${flood.other}${others ? ` (${others})` : ''}; ${flood.socketErrors} socket errors`,
  };
}

function duringListFigures(
  r: Outcome<DuringListResult>,
  cpu: CpuSplit | null,
): [RawFigure, RawFigure] {
  const p99Figure = 'fast: key never seen, during list-alls: p99';
  const rssFigure = 'fast: sidecar RSS growth during list-alls';
  if ('error' in r) {
    return [
      notMeasured(
        'fast_first_request_during_list_p99',
        p99Figure,
        'ms',
        `<= ${DURING_LIST_P99_MS} ms`,
        r.error,
      ),
      notMeasured(
        'fast_list_sidecar_rss_growth',
        rssFigure,
        'MB',
        `<= ${LIST_RSS_GROWTH_MB} MB`,
        r.error,
      ),
    ];
  }
  const kinds = Object.entries(r.failureKinds)
    .map(([k, n]) => `${k} (${n}); `)
    .join('');
  const lists =
    `${r.lists} lists of ${r.clients} clients back to back on gateway B ` +
    `(last: ${(r.listBytes / 1e6).toFixed(1)} MB in ${(r.listMs / 1000).toFixed(2)} s; table ` +
    `filled by SQL in ${r.fillSeconds.toFixed(1)} s)`;
  return [
    {
      id: 'fast_first_request_during_list_p99',
      other: otherOf(cpu),
      figure: p99Figure,
      measured: round(r.fresh.p99),
      unit: 'ms',
      target: `<= ${DURING_LIST_P99_MS} ms`,
      pass: r.failures === 0 && r.lists > 0 && r.fresh.p99 <= DURING_LIST_P99_MS,
      rps: null,
      p50: r.fresh.p50,
      p99: r.fresh.p99,
      ratio: null,
      note:
        `${invalid(r.failures)}${kinds}${r.probes} fresh keys, one at a time, while ${lists}; ` +
        `max ${r.fresh.max.toFixed(2)} ms`,
    },
    {
      id: 'fast_list_sidecar_rss_growth',
      other: otherOf(cpu),
      figure: rssFigure,
      measured: round(r.rss.growth, 1),
      unit: 'MB',
      target: `<= ${LIST_RSS_GROWTH_MB} MB`,
      pass: r.failures === 0 && r.lists > 0 && r.rss.growth <= LIST_RSS_GROWTH_MB,
      rps: null,
      p50: null,
      p99: null,
      ratio: null,
      note:
        `${invalid(r.failures)}sidecar B, sampled every 20 ms: ${r.rss.before.toFixed(1)} MB ` +
        `before, at most ${r.rss.peak.toFixed(1)} MB during ${lists}`,
    },
  ];
}
