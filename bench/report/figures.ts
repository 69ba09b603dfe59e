import type { CpuSplit } from '../cpu-split.js';
import { H2_REQUESTS_PER_CONNECTION } from '../h2load/run.js';
import type { Aggregate } from '../phases/aggregate.js';
import type { BalancerFloodResult } from '../phases/balancer-flood.js';
import type { BearerFirstSightResult } from '../phases/bearer-first-sight.js';
import { MEMORY_LOAD, type MemorySample } from '../phases/context.js';
import type { DistinctKeysResult, DistinctKeysRow } from '../phases/distinct-keys.js';
import { CREATED_BEFORE_MS, type FirstRequestResult } from '../phases/first-request.js';
import type { DuringListResult } from '../phases/first-sight-during-list.js';
import { FLOOD_CONNECTIONS } from '../phases/flood.js';
import type { GlobalLimitsResult, Hammered } from '../phases/global-limits.js';
import { H2_CONNECTIONS, H2_STREAMS, type Http2Result } from '../phases/http2.js';
import type { IdleChainResult } from '../phases/idle-chain.js';
import type { LatencyResult } from '../phases/latency.js';
import type { ManagementResult } from '../phases/management.js';
import type { MemoryResult } from '../phases/memory.js';
import type { PermissionsResult } from '../phases/permissions.js';
import type { RateLimitResult } from '../phases/rate-limit.js';
import type { RevocationResult } from '../phases/revocation.js';
import type { ThroughputResult } from '../phases/throughput.js';
import type { TracingResult } from '../phases/tracing.js';
import type { LuaCounters } from '../stack/nginx-control.js';
import { round } from '../stats.js';

/**
 * The one writer of the table's rows: every figure a run produces, its target, and how its
 * number comes out of the phases' results. Issue 7's rows have the engine behind gateway A,
 * issue 10's ("fast") a static responder behind B, then issue 23's miss path, 22's rate limits,
 * 38's key table, 39's permissions and 49's HTTP/2. docs/performance.md shows the same ids.
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
  /** Other processes used more than DISTURBED_CORES while this was measured: noise. */
  disturbed: boolean;
  /** The most CPU other processes used during any run of this figure, in cores. */
  otherCores: number;
  note: string;
}

/** Every figure a run must produce, in the table's order; the smoke test checks for each. */
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
  // Issue 51: the same limit's cost with the Redis store; one limit across 3 pairs.
  'fast_global_limit_cost',
  'global_limit_accuracy',
  'fast_permissions_cost',
  'fast_h2_apk_throughput',
  // Issue 52: every request traced (its "tracing off ÷ auth off" is fast_apk_throughput).
  'fast_tracing_sampled_throughput',
  'revocation_worst',
  'management_create_p50',
  'management_list',
  'sidecar_memory',
] as const;
export type FigureId = (typeof FIGURE_IDS)[number];

/** The targets, one place: issue 7's engine rows, 10's and 23's fast ones, then the others. */
export const LIMITS = {
  engineApk: 0.85,
  engineBearer: 0.8,
  engineHalfRateP99Ms: 1,
  engineFirstRequestMs: 5,
  fastApk: 0.9,
  fastBearer: 0.9,
  cacheOff: 0.4,
  p99AddedMaxRateMs: 0.5,
  flood: 0.8,
  duringListP99Ms: 10,
  listRssGrowthMb: 50,
  /** A created client's first request is a hit: at most a seen key's p99 plus this. */
  createdP99SlackMs: 0.5,
  bearerFirstSight: 1.1,
  distinctKeys: 0.9,
  balancerFlood: 0.95,
  rateLimitCost: 0.98,
  rateLimitAccuracy: 0.02,
  globalLimitCost: 0.95,
  globalLimitAccuracy: 0.05,
  permissionsCost: 0.97,
  h2: 0.95,
  tracingSampled: 0.85,
  revocationMs: 20,
  createP50Ms: 5,
  listMs: 100,
  memoryMb: 150,
  /** Above this growth (MB) between half the load's requests and its end, memory grows. */
  growthMb: 10,
} as const;

/** CPU of processes outside the run (cores) above which a figure is marked disturbed. */
export const DISTURBED_CORES = 0.2;
/** Below this share of the offered rate, a balancer flood is reported as not held. */
const HELD_SHARE = 0.9;

/** What a phase gives when it threw: its rows say why instead of a number. */
export type Outcome<T> = T | { error: string };

export interface Results {
  throughput: ThroughputResult;
  latency: LatencyResult;
  firstRequest: FirstRequestResult;
  management: ManagementResult;
  revocation: RevocationResult;
  fast: {
    throughput: ThroughputResult;
    latency: LatencyResult;
    firstRequest: FirstRequestResult;
    duringList: Outcome<DuringListResult>;
    rateLimit: Outcome<RateLimitResult>;
    globalLimits: Outcome<GlobalLimitsResult>;
    tracing: Outcome<TracingResult>;
    permissions: Outcome<PermissionsResult>;
    http2: Outcome<Http2Result>;
    idleChain: Outcome<IdleChainResult>;
    distinctKeys: Outcome<DistinctKeysResult>;
    distinctKeySizes: [number, number];
    balancerFlood: Outcome<BalancerFloodResult>;
    bearerFirstSight: Outcome<BearerFirstSightResult>;
  };
  memory: MemoryResult;
  memorySamples: MemorySample[];
  /** CPU split over each phase measured with the Node client (no wrk run to sample). */
  phaseCpu: Record<'firstRequest' | 'fastFirstRequest' | 'management' | 'revocation', CpuSplit> & {
    duringList: CpuSplit | null;
    idleChain: CpuSplit | null;
    bearerFirstSight: CpuSplit | null;
  };
}

/** A row before the disturbance verdict: `other` is the most foreign CPU seen while measuring. */
export type RawFigure = Omit<Figure, 'disturbed' | 'otherCores'> & { other: number };

type RowFields = Pick<RawFigure, 'figure' | 'measured' | 'unit' | 'target' | 'pass' | 'note'> &
  Partial<Pick<RawFigure, 'rps' | 'p50' | 'p99' | 'ratio' | 'other'>>;

const row = (id: FigureId, f: RowFields): RawFigure => ({
  id,
  other: 0,
  rps: null,
  p50: null,
  p99: null,
  ratio: null,
  ...f,
});

const atLeast = (min: number) => `>= ${min.toFixed(2)}`;
const atMost = (max: number, unit: string) => `<= ${max} ${unit}`;
const perRound = (runs: { rps: number }[]) => runs.map((r) => Math.round(r.rps)).join('/');
const kinds = (k: Record<string, number>) =>
  Object.entries(k)
    .map(([kind, n]) => `${kind} (${n}); `)
    .join('');

/** The start of a note whose measurement saw errors or refusals: the number is not a result. */
export const invalid = (errors: number) =>
  errors > 0 ? `INVALID: ${errors} errors/refusals; ` : '';

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

/** The rows of a phase that failed: no number, never a pass. */
export function notMeasured(
  id: FigureId,
  figure: string,
  unit: string,
  target: string,
  why: string,
) {
  return row(id, {
    figure,
    measured: Number.NaN,
    unit,
    target,
    pass: false,
    note: `NOT MEASURED: ${why}`,
  });
}

interface RatioOptions {
  /** Anything else that makes the run not a result (a flood that did not last, a table unsettled). */
  valid?: boolean;
  digits?: number;
  /** The phase's own ratio, where it computes one (its rounds'); default num.rps ÷ den.rps. */
  ratio?: number;
  /** The refusals that invalidate it; default both sides'. */
  errors?: number;
}

/** `num` ÷ `den` against `min` (null: a reference line), with `num`'s figures beside it. */
function ratioRow(
  id: FigureId,
  figure: string,
  num: Aggregate,
  den: Aggregate,
  min: number | null,
  note: string,
  o: RatioOptions = {},
): RawFigure {
  const ratio = o.ratio ?? num.rps / den.rps;
  const errors = o.errors ?? num.errors + den.errors;
  return row(id, {
    other: otherOf(num, den),
    figure,
    measured: round(ratio, o.digits ?? 3),
    unit: 'ratio',
    target: min === null ? '(reference)' : atLeast(min),
    pass: min === null ? null : errors === 0 && (o.valid ?? true) && ratio >= min,
    rps: num.rps,
    p50: num.p50,
    p99: num.p99,
    ratio: o.digits === undefined ? ratio : round(ratio, o.digits),
    note: `${invalid(errors)}${note}`,
  });
}

/** Every row, each with its disturbance verdict. */
export function figures(r: Results): Figure[] {
  const rows = [
    ...group(r, 'engine'),
    ...group(r, 'fast'),
    createdFirstRequestFigure(r.fast.firstRequest, r.phaseCpu.fastFirstRequest),
    idleChainFigure(r.fast.idleChain, r.phaseCpu.idleChain),
    bearerFirstSightFigure(r.fast.bearerFirstSight, r.phaseCpu.bearerFirstSight),
    ...cacheOffAndFlood(r.fast.throughput),
    ...duringListFigures(r.fast.duringList, r.phaseCpu.duringList),
    ...distinctKeysFigures(r.fast.distinctKeys, r.fast.distinctKeySizes),
    balancerFloodFigure(r.fast.balancerFlood),
    ...rateLimitFigures(r.fast.rateLimit),
    ...globalLimitFigures(r.fast.globalLimits),
    tracingFigure(r.fast.tracing),
    permissionsFigure(r.fast.permissions),
    http2Figure(r.fast.http2),
    ...managementFigures(r.revocation, r.management, r.phaseCpu),
    memoryFigure(r.memory, r.memorySamples),
  ];
  const order = (f: RawFigure) => FIGURE_IDS.indexOf(f.id);
  return rows
    .sort((x, y) => order(x) - order(y))
    .map(({ other, ...f }) => {
      const disturbed = other > DISTURBED_CORES;
      const note = disturbed
        ? `DISTURBED (other processes used ${other.toFixed(2)} cores); ${f.note}`
        : f.note;
      return { ...f, note, disturbed, otherCores: round(other, 2) };
    });
}

/** One load group's rows: its baseline, the seen credentials' ratios, the p99s added. */
function group(r: Results, label: 'engine' | 'fast'): RawFigure[] {
  const engine = label === 'engine';
  const t = engine ? r.throughput : r.fast.throughput;
  const l = engine ? r.latency : r.fast.latency;
  const id = (name: string) => `${engine ? '' : 'fast_'}${name}` as FigureId;
  const { baseline, apk, bearer } = t;
  // The bearer row against the same requests with authentication off, where the bench has them.
  const bearerBase = t.bearerBaseline ?? baseline;
  // Issue 23 judges the fast group's added p99 at full load (fast_apk_p99_added_max_rate); its
  // half-rate row stays a reference line, the engine's keeps issue 7's target.
  const halfRateMax = engine ? LIMITS.engineHalfRateP99Ms : null;
  const heldRate = Math.min(l.apk.rps, l.baseline.rps) < 0.95 * l.rate ? 'RATE NOT HELD; ' : '';
  const lErrors = l.apk.errors + l.baseline.errors;
  const p99s = (a: Aggregate) => a.runs.map((x) => x.p99.toFixed(1)).join('/');
  const rows = [
    row(id('baseline'), {
      other: otherOf(baseline),
      figure: `${label}: baseline (same nginx, TLS, conf; auth off)`,
      measured: round(baseline.rps, 0),
      unit: 'req/s',
      target: '(reference)',
      pass: null,
      rps: baseline.rps,
      p50: baseline.p50,
      p99: baseline.p99,
      ratio: 1,
      note: `${invalid(baseline.errors)}${baseline.requests} requests; upstream: ${engine ? 'the engine' : 'a static nginx responder'}`,
    }),
    ratioRow(
      id('apk_throughput'),
      `${label}: API key, seen: throughput vs baseline`,
      apk,
      baseline,
      engine ? LIMITS.engineApk : LIMITS.fastApk,
      `${apk.requests} requests`,
      { errors: apk.errors },
    ),
    row(id('apk_p99_added'), {
      other: otherOf(l.baseline, l.apk),
      figure: `${label}: API key: p99 added at half max rate`,
      measured: round(l.addedP99),
      unit: 'ms',
      target: halfRateMax === null ? '(reference)' : atMost(halfRateMax, 'ms'),
      pass: halfRateMax === null ? null : lErrors === 0 && l.addedP99 <= halfRateMax,
      rps: l.rate,
      p50: l.apk.p50,
      p99: l.apk.p99,
      note:
        `${invalid(lErrors)}${heldRate}at ${Math.round(l.rate)} req/s: median of ${l.apk.runs.length} ` +
        `rounds' p99: baseline ${l.baseline.p99.toFixed(2)} ms (got ${Math.round(l.baseline.rps)} ` +
        `req/s), gateway ${l.apk.p99.toFixed(2)} ms (got ${Math.round(l.apk.rps)} req/s); per ` +
        `round baseline ${p99s(l.baseline)}, gateway ${p99s(l.apk)} ms`,
    }),
    ratioRow(
      id('bearer_throughput'),
      `${label}: bearer token, seen: throughput vs baseline`,
      bearer,
      bearerBase,
      engine ? LIMITS.engineBearer : LIMITS.fastBearer,
      `${bearer.requests} requests (RS256, oidc-provider)${
        t.bearerBaseline
          ? `; vs the baseline sent the same token (${Math.round(bearerBase.rps)} req/s)`
          : ''
      }`,
      { errors: bearer.errors },
    ),
  ];
  if (engine) {
    const f = r.firstRequest;
    rows.push(
      row('first_request_p99', {
        other: otherOf(r.phaseCpu.firstRequest),
        figure: 'engine: key never seen (first request): p99',
        measured: round(f.fresh.p99),
        unit: 'ms',
        target: atMost(LIMITS.engineFirstRequestMs, 'ms'),
        pass: f.failures === 0 && f.fresh.p99 <= LIMITS.engineFirstRequestMs,
        p50: f.fresh.p50,
        p99: f.fresh.p99,
        note:
          `${invalid(f.failures)}${f.keys} fresh keys, one at a time (decision cache miss: nginx ` +
          `asks the sidecar); a seen key on the same connection: p50 ${f.seen.p50.toFixed(2)} ms, ` +
          `p99 ${f.seen.p99.toFixed(2)} ms`,
      }),
    );
  } else {
    // From the throughput runs themselves: both p99s are the rows' own (mean of rounds).
    const added = apk.p99 - baseline.p99;
    const errors = apk.errors + baseline.errors;
    const p99s2 = (a: Aggregate) => a.runs.map((x) => x.p99.toFixed(2)).join('/');
    rows.push(
      row('fast_apk_p99_added_max_rate', {
        other: otherOf(baseline, apk),
        figure: 'fast: API key: p99 added at maximum rate',
        measured: round(added),
        unit: 'ms',
        target: atMost(LIMITS.p99AddedMaxRateMs, 'ms'),
        pass: errors === 0 && added <= LIMITS.p99AddedMaxRateMs,
        rps: apk.rps,
        p50: apk.p50,
        p99: apk.p99,
        note:
          `${invalid(errors)}the throughput rows' runs, mean of ${apk.runs.length} rounds' p99: ` +
          `baseline ${baseline.p99.toFixed(2)} ms at ${Math.round(baseline.rps)} req/s, gateway ` +
          `${apk.p99.toFixed(2)} ms at ${Math.round(apk.rps)} req/s; per round baseline ` +
          `${p99s2(baseline)}, gateway ${p99s2(apk)} ms`,
      }),
    );
  }
  return rows;
}

/** B with its decision cache off, and the seen key under a flood of wrong secrets (issue 23). */
function cacheOffAndFlood({
  baseline,
  apk,
  cacheOff,
  flooded,
  flood,
}: ThroughputResult): RawFigure[] {
  const cacheFigure = 'fast: cache off (every request asks the sidecar)';
  const floodFigure = 'fast: API key, seen, under a flood of wrong secrets vs alone';
  const rows = [
    cacheOff
      ? ratioRow(
          'fast_cache_off_throughput',
          cacheFigure,
          cacheOff,
          baseline,
          LIMITS.cacheOff,
          `${cacheOff.requests} requests with one API key; the same configuration with auth_cache.max_age_ms 0`,
          { errors: cacheOff.errors },
        )
      : notMeasured(
          'fast_cache_off_throughput',
          cacheFigure,
          'ratio',
          atLeast(LIMITS.cacheOff),
          'no run',
        ),
  ];
  if (!flooded || !flood) {
    return [
      ...rows,
      notMeasured('fast_flood_ratio', floodFigure, 'ratio', atLeast(LIMITS.flood), 'no run'),
    ];
  }
  // The valid traffic's refusals are wrk's count (answers > 399, socket errors): the static
  // responder answers only 200, so nothing else non-2xx can reach it.
  const failed = flood.failed.length
    ? `INVALID: not flooded throughout: ${flood.failed.join('; ')}; `
    : '';
  const others = Object.entries(flood.statuses)
    .filter(([status]) => status !== '401' && status !== '429')
    .map(([status, n]) => `${status}: ${n}`)
    .join(', ');
  return [
    ...rows,
    ratioRow(
      'fast_flood_ratio',
      floodFigure,
      flooded,
      apk,
      LIMITS.flood,
      `${failed}valid traffic (the API-key row's key, rounds alternating): alone ` +
        `${Math.round(apk.rps)} req/s, with the flood ${Math.round(flooded.rps)} req/s, ` +
        `${apk.errors + flooded.errors} non-2xx; flood (second wrk, -t1 -c${FLOOD_CONNECTIONS}, a ` +
        `new random secret per request for the same client id): ${Math.round(flood.rps)} req/s, ` +
        `${flood.requests} answers: 401 ${flood.refused401}, 429 ${flood.refused429}, other ` +
        `${flood.other}${others ? ` (${others})` : ''}; ${flood.socketErrors} socket errors`,
      { valid: flood.failed.length === 0 },
    ),
  ];
}

/** How often nginx asked its sidecar (cache_miss growth), for notes; '' when unknown. */
function asked(counters: LuaCounters | null, of: number, what: string): string {
  if (!counters) return '';
  return `; nginx asked its sidecar ${counters.cache_miss ?? 0} times for ${of} ${what} (cache_miss)`;
}

/**
 * Issue 38's row in place of the never-seen one: a client created (on A) at least 100 ms before
 * its first request (on B). A hit when nginx asked no one (cache_miss did not grow) and the p99
 * is a seen key's within the slack; without counters, the latency alone decides.
 */
export function createdFirstRequestFigure(f: FirstRequestResult, cpu: CpuSplit): RawFigure {
  const limit = f.seen.p99 + LIMITS.createdP99SlackMs;
  const hit = f.counters === null || (f.counters.cache_miss ?? 0) === 0;
  return row('fast_created_first_request_p99', {
    other: otherOf(cpu),
    figure: `fast: a client's first request, created >= ${CREATED_BEFORE_MS} ms before: p99`,
    measured: round(f.fresh.p99),
    unit: 'ms',
    target: `a hit: <= seen p99 + ${LIMITS.createdP99SlackMs} ms (${limit.toFixed(2)}), sidecar not asked`,
    pass: f.failures === 0 && hit && f.fresh.p99 <= limit,
    p50: f.fresh.p50,
    p99: f.fresh.p99,
    ratio: f.fresh.p99 / f.seen.p99,
    note:
      `${invalid(f.failures)}${f.keys} keys created through A's API, each presented once to B, ` +
      `one at a time, ${Math.round(f.createdBeforeMs)} ms or more after its creation; a seen key ` +
      `on the same connection: p50 ${f.seen.p50.toFixed(2)} ms, p99 ${f.seen.p99.toFixed(2)} ms ` +
      `(ratio column: created p99 / seen p99); max ${f.fresh.max.toFixed(2)} ms` +
      (f.counters ? asked(f.counters, f.keys, 'created keys') : '; nginx counters not read'),
  });
}

/**
 * A reference line: the p99 of a round trip through as many idle processes as a first sight
 * wakes, on this machine, just before the first-sight rows (no gateway code at all).
 */
function idleChainFigure(c: Outcome<IdleChainResult>, cpu: CpuSplit | null): RawFigure {
  const figure = "fast: 4 idle relays, no gateway (a first sight's 8 wake-ups): p99";
  if ('error' in c) return notMeasured('fast_idle_chain_p99', figure, 'ms', '(reference)', c.error);
  const { firstSight: s, seen } = c;
  return row('fast_idle_chain_p99', {
    other: otherOf(cpu),
    figure,
    measured: round(s.p99),
    unit: 'ms',
    target: '(reference)',
    pass: null,
    p50: s.p50,
    p99: s.p99,
    note:
      `${c.roundTrips} round trips of 200 bytes, one at a time, through Node relays on unix ` +
      `sockets that do nothing, max ${s.max.toFixed(2)} ms; 2 relays (a seen key's 4 wake-ups): ` +
      `p50 ${seen.p50.toFixed(2)} ms, p99 ${seen.p99.toFixed(2)} ms`,
  });
}

/** A bearer token's first sight, p99, ÷ the p99 of the idle chain interleaved with the tokens. */
export function bearerFirstSightFigure(
  r: Outcome<BearerFirstSightResult>,
  cpu: CpuSplit | null,
): RawFigure {
  const figure = "fast: bearer token's first sight: p99 vs the idle chain's p99";
  const target = `<= ${LIMITS.bearerFirstSight.toFixed(2)}`;
  if ('error' in r)
    return notMeasured('fast_bearer_first_sight_p99', figure, 'ratio', target, r.error);
  const ratio = r.fresh.p99 / r.chain.p99;
  return row('fast_bearer_first_sight_p99', {
    other: otherOf(cpu),
    figure,
    measured: round(ratio),
    unit: 'ratio',
    target,
    pass: r.failures === 0 && ratio <= LIMITS.bearerFirstSight,
    p50: r.fresh.p50,
    p99: r.fresh.p99,
    ratio,
    note:
      `${invalid(r.failures)}${r.tokens} tokens issued by the provider beforehand, each presented ` +
      `once to B, one at a time, after ${r.warmupTokens} untimed others: p99 ` +
      `${r.fresh.p99.toFixed(2)} ms, max ${r.fresh.max.toFixed(2)} ms, against the 4 idle relays' ` +
      `p99 ${r.chain.p99.toFixed(2)} ms, one round trip before each token (p50 ` +
      `${r.chain.p50.toFixed(2)} ms; fast_idle_chain_p99 is the chain alone); a seen key on the ` +
      `same connection: p99 ${r.seen.p99.toFixed(2)} ms`,
  });
}

/** A never-seen key on B while every client is listed, and sidecar B's RSS meanwhile. */
function duringListFigures(r: Outcome<DuringListResult>, cpu: CpuSplit | null): RawFigure[] {
  const p99Figure = 'fast: key never seen, during list-alls: p99';
  const rssFigure = 'fast: sidecar RSS growth during list-alls';
  const p99Target = atMost(LIMITS.duringListP99Ms, 'ms');
  const rssTarget = atMost(LIMITS.listRssGrowthMb, 'MB');
  if ('error' in r) {
    return [
      notMeasured('fast_first_request_during_list_p99', p99Figure, 'ms', p99Target, r.error),
      notMeasured('fast_list_sidecar_rss_growth', rssFigure, 'MB', rssTarget, r.error),
    ];
  }
  const ok = r.failures === 0 && r.lists > 0;
  const lists =
    `${r.lists} lists of ${r.clients} clients back to back on gateway B (last: ` +
    `${(r.listBytes / 1e6).toFixed(1)} MB in ${(r.listMs / 1000).toFixed(2)} s; table filled by ` +
    `SQL in ${r.fillSeconds.toFixed(1)} s)`;
  return [
    row('fast_first_request_during_list_p99', {
      other: otherOf(cpu),
      figure: p99Figure,
      measured: round(r.fresh.p99),
      unit: 'ms',
      target: p99Target,
      pass: ok && r.fresh.p99 <= LIMITS.duringListP99Ms,
      p50: r.fresh.p50,
      p99: r.fresh.p99,
      note:
        `${invalid(r.failures)}${kinds(r.failureKinds)}${r.probes} fresh keys, one at a time, ` +
        `while ${lists}; max ${r.fresh.max.toFixed(2)} ms`,
    }),
    row('fast_list_sidecar_rss_growth', {
      other: otherOf(cpu),
      figure: rssFigure,
      measured: round(r.rss.growth, 1),
      unit: 'MB',
      target: rssTarget,
      pass: ok && r.rss.growth <= LIMITS.listRssGrowthMb,
      note:
        `${invalid(r.failures)}sidecar B, sampled every 20 ms: ${r.rss.before.toFixed(1)} MB ` +
        `before, at most ${r.rss.peak.toFixed(1)} MB during ${lists}`,
    }),
  ];
}

/** "10^4" for 10000, the count itself otherwise. */
export function powerOfTen(n: number): string {
  const exponent = Math.log10(n);
  return Number.isInteger(exponent) && exponent >= 2 ? `10^${exponent}` : String(n);
}

/** Issue 38's rows (a) and (b): callers spread over the smaller and the larger set of keys. */
export function distinctKeysFigures(
  r: Outcome<DistinctKeysResult>,
  sizes: [number, number],
): RawFigure[] {
  const ids: FigureId[] = ['fast_distinct_keys_throughput', 'fast_distinct_keys_large_throughput'];
  const figure = (n: number) =>
    `fast: callers over ${powerOfTen(n)} distinct keys (uniform) vs auth off`;
  const target = atLeast(LIMITS.distinctKeys);
  return ids.map((id, i) => {
    const why = 'error' in r ? r.error : r.rows[i] ? null : 'no run';
    if (why !== null || 'error' in r)
      return notMeasured(id, figure(sizes[i]!), 'ratio', target, why ?? '');
    return distinctKeysFigure(id, figure(r.rows[i]!.keys), r.rows[i]!);
  });
}

function distinctKeysFigure(id: FigureId, figure: string, k: DistinctKeysRow): RawFigure {
  const table = k.keyTable;
  const mb = (bytes: number, digits: number) => (bytes / 2 ** 20).toFixed(digits);
  return ratioRow(
    id,
    figure,
    k.gateway,
    k.baseline,
    LIMITS.distinctKeys,
    `${k.settled ? '' : "B's key table did not settle; "}wrk picks one of ${k.keys} keys at ` +
      `random per request (made by SQL), the baseline sent the same: gateway ` +
      `${Math.round(k.gateway.rps)} req/s (${perRound(k.gateway.runs)}), baseline ` +
      `${Math.round(k.baseline.rps)} req/s (${perRound(k.baseline.runs)})` +
      asked(k.counters, k.gateway.requests, 'requests') +
      (table
        ? `; B's key table: ${table.records} records, ${mb(table.usedBytes, 1)} of ` +
          `${mb(table.capacityBytes, 0)} MB used, held ${k.settleSeconds.toFixed(1)} s after the INSERT`
        : '; B has no key table'),
    { valid: k.settled, ratio: k.ratio },
  );
}

/** Issue 38's row (c): behind HAProxy, valid traffic beside a random-id flood ÷ beside none. */
export function balancerFloodFigure(r: Outcome<BalancerFloodResult>): RawFigure {
  const figure =
    'fast: behind HAProxy, valid traffic under a random-id flood vs a no-credential flood';
  const target = atLeast(LIMITS.balancerFlood);
  if ('error' in r)
    return notMeasured('fast_balancer_flood_ratio', figure, 'ratio', target, r.error);
  const failed = [...r.randomIdFlood.failed, ...r.noneFlood.failed];
  // A flood that could not keep its rate was not "the same rate": said, not hidden. 0.9: a
  // flood's rate counts from its start, half a second before the measured run.
  const notHeld = [
    ...(r.randomIdFlood.rps >= HELD_SHARE * r.floodRate ? [] : ['random-id']),
    ...(r.noneFlood.rps >= HELD_SHARE * r.floodRate ? [] : ['no-credential']),
  ];
  const statuses = (s: Record<string, number>) =>
    Object.entries(s)
      .map(([status, n]) => `${status} ${n}`)
      .join(', ') || 'no answers';
  return ratioRow(
    'fast_balancer_flood_ratio',
    figure,
    r.randomId,
    r.none,
    LIMITS.balancerFlood,
    `${failed.length ? `INVALID: not flooded throughout: ${failed.join('; ')}; ` : ''}` +
      `${notHeld.length ? `FLOOD RATE NOT HELD (${notHeld.join(', ')}); ` : ''}` +
      `HAProxy 2.6 (1 thread, TLS ended and made again) in front of B; valid traffic (one seen ` +
      `key, wrk -c32 at its maximum): alone ${Math.round(r.aloneRps)} req/s, beside random ids ` +
      `${Math.round(r.randomId.rps)} req/s, beside no credential ${Math.round(r.none.rps)} req/s; ` +
      `each flood (wrk -t1 -c${FLOOD_CONNECTIONS}) offered ${r.floodRate} req/s: random ids got ` +
      `${Math.round(r.randomIdFlood.rps)} req/s (${statuses(r.randomIdFlood.statuses)}), no ` +
      `credential ${Math.round(r.noneFlood.rps)} req/s (${statuses(r.noneFlood.statuses)})` +
      asked(r.counters, r.randomIdFlood.requests, 'random-id requests'),
    { valid: failed.length === 0, ratio: r.ratio },
  );
}

/** Issue 22's rows: a limit never reached costs at most 2 %; a limit holds within 2 %. */
function rateLimitFigures(r: Outcome<RateLimitResult>): RawFigure[] {
  const cost = 'fast: API key with a rate limit it never reaches vs none';
  const accuracy = 'fast: requests allowed under a limit, hammered 10 s (2 s quick), vs the limit';
  const accuracyTarget = atMost(LIMITS.rateLimitAccuracy * 100, '%');
  if ('error' in r) {
    return [
      notMeasured('fast_rate_limit_cost', cost, 'ratio', atLeast(LIMITS.rateLimitCost), r.error),
      notMeasured('fast_rate_limit_accuracy', accuracy, '%', accuracyTarget, r.error),
    ];
  }
  const { limited, unlimited, accuracy: a } = r;
  const expected = a.limit * a.seconds;
  const off = Math.abs(a.allowed - expected) / expected;
  const costRow = ratioRow(
    'fast_rate_limit_cost',
    cost,
    limited,
    unlimited,
    LIMITS.rateLimitCost,
    `the same client, its limit set and removed by PUT between rounds: with ` +
      `${Math.round(limited.rps)} req/s (${perRound(limited.runs)}), without ` +
      `${Math.round(unlimited.rps)} req/s (${perRound(unlimited.runs)})`,
    { digits: 3 },
  );
  return [
    costRow,
    row('fast_rate_limit_accuracy', {
      // A client that cannot send for a while (a busy machine) leaves part of a window unused.
      other: otherOf(a.cpu),
      figure: accuracy,
      measured: round(off * 100, 2),
      unit: '%',
      target: accuracyTarget,
      pass: off <= LIMITS.rateLimitAccuracy,
      note:
        `limit ${a.limit} per second, ${a.seconds.toFixed(2)} s after the same load: ` +
        `${a.allowed} allowed (expected ${Math.round(expected)}), ${a.refused} refused with 429`,
    }),
  ];
}

/** Issue 51's rows: a global limit never reached costs at most 5 %; hammered, it holds within 5 %. */
export function globalLimitFigures(r: Outcome<GlobalLimitsResult>): RawFigure[] {
  const cost = 'fast: API key with a limit it never reaches, RATE_LIMITS_STORE=redis, vs none';
  const accuracy =
    'fleet: one client hammered across 3 pairs behind HAProxy, 60 s (5 s quick), vs its limit';
  const accuracyTarget = atMost(LIMITS.globalLimitAccuracy * 100, '%');
  if ('error' in r) {
    return [
      notMeasured(
        'fast_global_limit_cost',
        cost,
        'ratio',
        atLeast(LIMITS.globalLimitCost),
        r.error,
      ),
      notMeasured('global_limit_accuracy', accuracy, '%', accuracyTarget, r.error),
    ];
  }
  const { limited, unlimited } = r.cost;
  const expected = (h: Hammered) => (r.limit.requests * h.seconds) / r.limit.per_seconds;
  const off = (r.redis.allowed - expected(r.redis)) / expected(r.redis);
  // Anything but 200 and 429 (a 5xx, a socket error) is what the issue says never happens.
  const others = Object.entries(r.redis.statuses).filter(([s]) => s !== '200' && s !== '429');
  const answers = (h: Hammered) =>
    `${h.allowed} admitted in ${h.seconds.toFixed(1)} s (the limit allows ` +
    `${Math.round(expected(h))}), ${h.refused} refused with 429`;
  return [
    ratioRow(
      'fast_global_limit_cost',
      cost,
      limited,
      unlimited,
      LIMITS.globalLimitCost,
      `one of 3 pairs on one Redis (sync every ${r.syncMs} ms), the same client, its limit set ` +
        `and removed by PUT between rounds: with ${Math.round(limited.rps)} req/s ` +
        `(${perRound(limited.runs)}), without ${Math.round(unlimited.rps)} req/s ` +
        `(${perRound(unlimited.runs)}); fast_rate_limit_cost is the local store's`,
      { digits: 3 },
    ),
    row('global_limit_accuracy', {
      other: otherOf(r.redis.cpu, r.local.cpu),
      figure: accuracy,
      measured: round(Math.abs(off) * 100, 2),
      unit: '%',
      target: accuracyTarget,
      pass: others.length === 0 && Math.abs(off) <= LIMITS.globalLimitAccuracy,
      note:
        `${others.length ? `INVALID: answered ${others.map(([s, n]) => `${s} ×${n}`).join(', ')}; ` : ''}` +
        `limit ${r.limit.requests} per ${r.limit.per_seconds} s, RATE_LIMITS_STORE=redis, sync ` +
        `every ${r.syncMs} ms, after one untimed window of the same load: ${answers(r.redis)} ` +
        `(${off >= 0 ? '+' : ''}${(off * 100).toFixed(1)} %); the same pairs with ` +
        `RATE_LIMITS_STORE=local: ${answers(r.local)}, ` +
        `${(r.local.allowed / expected(r.local)).toFixed(2)} × the limit (reference)`,
    }),
  ];
}

/** Issue 52's row: a seen key with every request traced keeps 85 % of tracing off. */
export function tracingFigure(r: Outcome<TracingResult>): RawFigure {
  const figure = 'fast: API key, seen, tracing on (sampled 1.0, spans exported) vs off';
  if ('error' in r) {
    const target = atLeast(LIMITS.tracingSampled);
    return notMeasured('fast_tracing_sampled_throughput', figure, 'ratio', target, r.error);
  }
  const lost = r.answered - r.spans;
  // CPU a request (µs) of a process tree, from the runs' mean cores and rate.
  const us = (a: Aggregate, tree: string) =>
    a.cpu?.[tree] === undefined ? '?' : ((Number(a.cpu[tree]) / a.rps) * 1e6).toFixed(0);
  return ratioRow(
    'fast_tracing_sampled_throughput',
    figure,
    r.on,
    r.off,
    LIMITS.tracingSampled,
    `${lost > 0 ? `SPANS LOST: ${lost} requests without an exported span (UDP datagrams the kernel dropped meanwhile: ${r.udpDropped ?? '?'}); ` : ''}` +
      `two copies of B's nginx (B's default.conf; B's settings rendered again with tracing on), ` +
      `their span records to the sidecar's receiver and OTLP/HTTP exporter in a process of its ` +
      `own, exporting to a sink that answers 200: ${r.spans} spans for ` +
      `${r.answered} requests answered; on ${Math.round(r.on.rps)} req/s (${perRound(r.on.runs)}), ` +
      `off ${Math.round(r.off.rps)} req/s (${perRound(r.off.runs)}); CPU a request: nginx ` +
      `${us(r.on, 'nginx tracing on')} µs on, ${us(r.off, 'nginx tracing off')} µs off, the ` +
      `exporter ${us(r.on, 'span exporter')} µs, the sink ${us(r.on, 'bench')} µs; tracing off ÷ auth off is ` +
      `fast_apk_throughput (off by default)`,
    { digits: 3, valid: lost <= 0 },
  );
}

/** Issue 39's row: a client with 10 rules keeps at least 97 % of a client without. */
function permissionsFigure(r: Outcome<PermissionsResult>): RawFigure {
  const figure = 'fast: API key with 10 rules (the last allowing the call) vs none';
  if ('error' in r)
    return notMeasured(
      'fast_permissions_cost',
      figure,
      'ratio',
      atLeast(LIMITS.permissionsCost),
      r.error,
    );
  const { restricted: w, unrestricted: wo } = r;
  return ratioRow(
    'fast_permissions_cost',
    figure,
    w,
    wo,
    LIMITS.permissionsCost,
    `the same client, its rules set and removed by PUT between rounds: with ` +
      `${Math.round(w.rps)} req/s (${perRound(w.runs)}), without ${Math.round(wo.rps)} req/s ` +
      `(${perRound(wo.runs)}); both the nginx module's hits`,
    { digits: 3 },
  );
}

/** Issue 49's row: a seen API key over HTTP/2 keeps 95 % of auth off over HTTP/2. */
export function http2Figure(r: Outcome<Http2Result>): RawFigure {
  const figure = 'fast: API key already seen over HTTP/2 ÷ baseline over HTTP/2 (h2load)';
  const target = atLeast(LIMITS.h2);
  if ('error' in r) return notMeasured('fast_h2_apk_throughput', figure, 'ratio', target, r.error);
  const { baseline, apk, moduleHits } = r;
  const ratio = apk.rps / baseline.rps;
  const errors = baseline.errors + apk.errors;
  const hits =
    moduleHits === null
      ? 'module hits not read'
      : `${moduleHits} module hits counted for ${apk.requests} requests`;
  return row('fast_h2_apk_throughput', {
    other: otherOf(...[...apk.runs, ...baseline.runs].map((x) => x.cpu)),
    figure,
    measured: round(ratio),
    unit: 'ratio',
    target,
    pass: errors === 0 && ratio >= LIMITS.h2,
    rps: apk.rps,
    ratio: round(ratio),
    note:
      `${invalid(errors)}h2load -t1 -c${H2_CONNECTIONS} -m${H2_STREAMS}, each connection its ` +
      `${H2_REQUESTS_PER_CONNECTION} requests then closed by nginx (keepalive_requests): ` +
      `${Math.round(apk.rps)} req/s (${perRound(apk.runs)}) against ${Math.round(baseline.rps)} ` +
      `req/s (${perRound(baseline.runs)}); ${hits}`,
  });
}

/** Revocation on two pairs (issue 23: worst of the deletes, ≤ 20 ms) and management's rows. */
function managementFigures(
  v: RevocationResult,
  m: ManagementResult,
  cpu: Results['phaseCpu'],
): RawFigure[] {
  const pairs = Object.entries(v.byPair)
    .map(
      ([pair, p]) => `${pair} worst ${p.worstMs.toFixed(1)} ms, ${p.acceptedAfterDelete} accepted`,
    )
    .join('; ');
  return [
    row('revocation_worst', {
      other: otherOf(cpu.revocation),
      figure: 'revocation on 2 pairs, worst of deletes',
      measured: round(v.worstMs, 1),
      unit: 'ms',
      target: atMost(LIMITS.revocationMs, 'ms'),
      pass: v.failures === 0 && v.worstMs <= LIMITS.revocationMs,
      p50: v.p50Ms,
      note:
        `${invalid(v.failures)}${kinds(v.failureKinds)}${v.deletes} deletes under load; ` +
        `${v.acceptedAfterDelete} requests accepted after DELETE answered (${pairs}); resolution ` +
        `${v.pollMs} ms + 1 round trip`,
    }),
    row('management_create_p50', {
      other: otherOf(cpu.management),
      figure: 'management: create p50',
      measured: round(m.create.p50),
      unit: 'ms',
      target: atMost(LIMITS.createP50Ms, 'ms'),
      pass: m.failures === 0 && m.create.p50 <= LIMITS.createP50Ms,
      p50: m.create.p50,
      p99: m.create.p99,
      note: `${invalid(m.failures)}${m.creates} creates, one at a time`,
    }),
    row('management_list', {
      other: otherOf(cpu.management),
      figure: `management: list ${m.clients} clients`,
      measured: round(m.list.p50, 1),
      unit: 'ms',
      target: atMost(LIMITS.listMs, 'ms'),
      pass: m.failures === 0 && m.listedItems === m.clients && m.list.p50 <= LIMITS.listMs,
      p50: m.list.p50,
      p99: m.list.max,
      note: `${m.listedItems} items, ${Math.round(m.list.bytes / 1024)} KiB per answer; p50 of runs (p99 column: max)`,
    }),
  ];
}

/**
 * Sidecar A's RSS after the memory load, and whether it is flat: growth under the memory load
 * only, from the sample taken as it began (the phases before it allocate once: a list of 10^5
 * clients, a thousand first sights), over the load's second half.
 */
export function memoryFigure(memory: MemoryResult, samples: MemorySample[]): RawFigure {
  const withA = samples.filter((s) => s.sidecarA !== null && s.requests > 0);
  const firstLoad = withA.findIndex((s) => s.at === MEMORY_LOAD);
  const window = firstLoad > 0 ? withA.slice(firstLoad - 1) : withA;
  const start = window[0];
  const last = window.at(-1);
  const half = start && last ? start.requests + (last.requests - start.requests) / 2 : 0;
  const mid = last ? window.filter((s) => s.requests <= half).at(-1) : undefined;
  const rss = last?.sidecarA ?? Number.NaN;
  const growth = last && mid ? last.sidecarA! - mid.sidecarA! : Number.NaN;
  const errors = memory.load?.errors ?? 0;
  return row('sidecar_memory', {
    other: otherOf(memory.load),
    figure: `sidecar RSS after ${memory.requests} auth. requests`,
    measured: round(rss, 1),
    unit: 'MB',
    target: `<= ${LIMITS.memoryMb} MB, flat`,
    pass: errors === 0 && rss <= LIMITS.memoryMb && growth <= LIMITS.growthMb,
    rps: memory.load?.rps ?? null,
    p50: memory.load?.p50 ?? null,
    p99: memory.load?.p99 ?? null,
    note:
      `${invalid(errors)}${growth >= 0 ? '+' : ''}${growth.toFixed(1)} MB since ` +
      `${mid?.requests ?? '?'} requests (growing: > ${LIMITS.growthMb} MB); ${memory.keys} keys rotated` +
      (memory.requests < memory.wanted ? `; ${memory.wanted} did not fit in the time budget` : ''),
  });
}
