import type { CpuSplit } from '../cpu-split.js';
import type { BalancerFloodResult } from '../phases/balancer-flood.js';
import type { BearerFirstSightResult } from '../phases/bearer-first-sight.js';
import { MEMORY_LOAD, type MemorySample } from '../phases/context.js';
import type { DistinctKeysResult } from '../phases/distinct-keys.js';
import type { FirstRequestResult } from '../phases/first-request.js';
import type { DuringListResult } from '../phases/first-sight-during-list.js';
import type { Http2Result } from '../phases/http2.js';
import type { IdleChainResult } from '../phases/idle-chain.js';
import type { LatencyResult } from '../phases/latency.js';
import type { ManagementResult } from '../phases/management.js';
import type { MemoryResult } from '../phases/memory.js';
import type { PermissionsResult } from '../phases/permissions.js';
import type { RateLimitResult } from '../phases/rate-limit.js';
import type { RevocationResult } from '../phases/revocation.js';
import type { ThroughputResult } from '../phases/throughput.js';
import { round } from '../stats.js';
import { type Figure, type FigureId, invalid, otherOf, type RawFigure } from './figure.js';
import { http2Figure } from './http2-figures.js';
import {
  balancerFloodFigure,
  bearerFirstSightFigure,
  createdFirstRequestFigure,
  distinctKeysFigures,
} from './key-table-figures.js';
import { missPathFigures, type Outcome } from './miss-path-figures.js';
import { permissionsFigure } from './permissions-figures.js';
import { rateLimitFigures } from './rate-limit-figures.js';

/** CPU of processes outside the run (cores) above which a figure is marked disturbed. */
export const DISTURBED_CORES = 0.2;

/** Above this growth (MB) between half the requests and the end, memory counts as growing. */
export const GROWTH_LIMIT_MB = 10;

/** Issue 23 (was 100 ms since issue 10): worst of the deletes, on both pairs. */
const REVOCATION_MAX_MS = 20;

export interface Results {
  throughput: ThroughputResult;
  latency: LatencyResult;
  firstRequest: FirstRequestResult;
  management: ManagementResult;
  revocation: RevocationResult;
  /** The same load rows with the static responder behind gateway B (issue 10). */
  fast: {
    throughput: ThroughputResult;
    latency: LatencyResult;
    firstRequest: FirstRequestResult;
    /** A never-seen key on B while every client is listed (issue 23). */
    duringList: Outcome<DuringListResult>;
    /** A rate limit's cost and accuracy on B (issue 22). */
    rateLimit: Outcome<RateLimitResult>;
    /** Permissions' cost on B: 10 rules against none (issue 39). */
    permissions: Outcome<PermissionsResult>;
    /** Issue 49: the API-key row over HTTP/2 (h2load), against the baseline over HTTP/2. */
    http2: Outcome<Http2Result>;
    /** Idle relays with a first sight's wake-ups: what the machine's scheduling costs that row. */
    idleChain: Outcome<IdleChainResult>;
    /** Issue 38: callers over many distinct keys (the two sizes asked for, smaller first). */
    distinctKeys: Outcome<DistinctKeysResult>;
    distinctKeySizes: [number, number];
    /** Issue 38: behind HAProxy, a random-id flood against a credential-less one. */
    balancerFlood: Outcome<BalancerFloodResult>;
    /** Issue 38: a bearer token's first sight (against the idle chain). */
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

/** The fixed rate was not held (machine too busy): the two p99s are not at the same load. */
const heldRate = (l: LatencyResult) =>
  Math.min(l.apk.rps, l.baseline.rps) < 0.95 * l.rate ? 'RATE NOT HELD; ' : '';

export function figures(r: Results): Figure[] {
  return rawFigures(r).map(({ other, ...row }) => {
    const disturbed = other > DISTURBED_CORES;
    const note = disturbed
      ? `DISTURBED (other processes used ${other.toFixed(2)} cores); ${row.note}`
      : row.note;
    return { ...row, note, disturbed, otherCores: round(other, 2) };
  });
}

function rawFigures(r: Results): RawFigure[] {
  const m = r.management;
  const v = r.revocation;
  const memory = memoryFigure(r.memory, r.memorySamples);
  const pairs = Object.entries(v.byPair)
    .map(
      ([pair, p]) => `${pair} worst ${p.worstMs.toFixed(1)} ms, ${p.acceptedAfterDelete} accepted`,
    )
    .join('; ');
  return [
    ...groupFigures({
      prefix: '',
      label: 'engine',
      upstream: 'the engine',
      throughput: r.throughput,
      latency: r.latency,
      firstRequest: r.firstRequest,
      firstRequestCpu: r.phaseCpu.firstRequest,
      apkMin: 0.85,
      bearerMin: 0.8,
      halfRateP99Max: 1,
      firstRequestMax: 5,
    }),
    ...groupFigures({
      prefix: 'fast_',
      label: 'fast',
      upstream: 'a static nginx responder',
      throughput: r.fast.throughput,
      latency: r.fast.latency,
      firstRequest: r.fast.firstRequest,
      firstRequestCpu: r.phaseCpu.fastFirstRequest,
      apkMin: 0.9,
      bearerMin: 0.9,
      // Issue 23 judges the fast group's added p99 at full load (fast_apk_p99_added_max_rate):
      // the rate that matters for capacity, measured in the same runs as the ratio. The
      // half-rate row stays as a reference without a target (its wrk schedule and this shared
      // machine's tail decide it as much as the gateway does); the engine's keeps issue 7's.
      halfRateP99Max: null,
      firstRequestMax: 3,
      cacheOffMin: 0.35,
      // Issue 38: a created client's first request (a hit) in place of the never-seen row.
      firstRequestFigure: createdFirstRequestFigure,
    }),
    ...missPathFigures(
      r.fast.throughput,
      r.fast.duringList,
      r.phaseCpu.duringList,
      r.fast.idleChain,
      r.phaseCpu.idleChain,
    ),
    bearerFirstSightFigure(r.fast.bearerFirstSight, r.phaseCpu.bearerFirstSight),
    ...distinctKeysFigures(r.fast.distinctKeys, r.fast.distinctKeySizes),
    balancerFloodFigure(r.fast.balancerFlood),
    ...rateLimitFigures(r.fast.rateLimit),
    permissionsFigure(r.fast.permissions),
    http2Figure(r.fast.http2),
    {
      id: 'revocation_worst',
      other: otherOf(r.phaseCpu.revocation),
      figure: 'revocation on 2 pairs, worst of deletes',
      measured: round(v.worstMs, 1),
      unit: 'ms',
      target: `<= ${REVOCATION_MAX_MS} ms`,
      pass: v.failures === 0 && v.worstMs <= REVOCATION_MAX_MS,
      rps: null,
      p50: v.p50Ms,
      p99: null,
      ratio: null,
      note:
        `${invalid(v.failures)}${Object.entries(v.failureKinds)
          .map(([k, n]) => `${k} (${n}); `)
          .join('')}${v.deletes} deletes under load; ${v.acceptedAfterDelete} requests accepted ` +
        `after DELETE answered (${pairs}); resolution ${v.pollMs} ms + 1 round trip`,
    },
    {
      id: 'management_create_p50',
      other: otherOf(r.phaseCpu.management),
      figure: 'management: create p50',
      measured: round(m.create.p50),
      unit: 'ms',
      target: '<= 5 ms',
      pass: m.failures === 0 && m.create.p50 <= 5,
      rps: null,
      p50: m.create.p50,
      p99: m.create.p99,
      ratio: null,
      note: `${invalid(m.failures)}${m.creates} creates, one at a time`,
    },
    {
      id: 'management_list',
      other: otherOf(r.phaseCpu.management),
      figure: `management: list ${m.clients} clients`,
      measured: round(m.list.p50, 1),
      unit: 'ms',
      target: '<= 100 ms',
      pass: m.failures === 0 && m.listedItems === m.clients && m.list.p50 <= 100,
      rps: null,
      p50: m.list.p50,
      p99: m.list.max,
      ratio: null,
      note: `${m.listedItems} items, ${Math.round(m.list.bytes / 1024)} KiB per answer; p50 of runs (p99 column: max)`,
    },
    memory,
  ];
}

interface Group {
  /** Prepended to each id: '' for the engine rows (their ids predate the fast ones). */
  prefix: '' | 'fast_';
  label: string;
  upstream: string;
  throughput: ThroughputResult;
  latency: LatencyResult;
  firstRequest: FirstRequestResult;
  firstRequestCpu: CpuSplit;
  /** Targets: issue 7's for the engine rows, issues 10's and 23's for the fast ones. */
  apkMin: number;
  bearerMin: number;
  /** null: the row is a reference line. */
  halfRateP99Max: number | null;
  firstRequestMax: number;
  /** Cache off vs baseline; absent: a reference line. */
  cacheOffMin?: number;
  /** Another row in place of the never-seen one (the fast group's, issue 38). */
  firstRequestFigure?: (f: FirstRequestResult, cpu: CpuSplit) => RawFigure;
}

/** One group's rows: its baseline, the seen-credential ratios, p99 added, first sight. */
function groupFigures(g: Group): RawFigure[] {
  const { baseline, apk, bearer, cacheOff } = g.throughput;
  // The bearer row against the same requests with authentication off, where the bench has them.
  const bearerBase = g.throughput.bearerBaseline ?? baseline;
  const apkRatio = apk.rps / baseline.rps;
  const bearerRatio = bearer.rps / bearerBase.rps;
  const l = g.latency;
  const f = g.firstRequest;
  const id = (name: string) => `${g.prefix}${name}` as FigureId;
  const rows: RawFigure[] = [
    {
      id: id('baseline'),
      other: otherOf(baseline),
      figure: `${g.label}: baseline (same nginx, TLS, conf; auth off)`,
      measured: round(baseline.rps, 0),
      unit: 'req/s',
      target: '(reference)',
      pass: null,
      rps: baseline.rps,
      p50: baseline.p50,
      p99: baseline.p99,
      ratio: 1,
      note: `${invalid(baseline.errors)}${baseline.requests} requests; upstream: ${g.upstream}`,
    },
    {
      id: id('apk_throughput'),
      other: otherOf(baseline, apk),
      figure: `${g.label}: API key, seen: throughput vs baseline`,
      measured: round(apkRatio),
      unit: 'ratio',
      target: `>= ${g.apkMin.toFixed(2)}`,
      pass: apk.errors === 0 && apkRatio >= g.apkMin,
      rps: apk.rps,
      p50: apk.p50,
      p99: apk.p99,
      ratio: apkRatio,
      note: `${invalid(apk.errors)}${apk.requests} requests`,
    },
    {
      id: id('apk_p99_added'),
      other: otherOf(l.baseline, l.apk),
      figure: `${g.label}: API key: p99 added at half max rate`,
      measured: round(l.addedP99),
      unit: 'ms',
      target: g.halfRateP99Max === null ? '(reference)' : `<= ${g.halfRateP99Max} ms`,
      pass:
        g.halfRateP99Max === null
          ? null
          : l.apk.errors + l.baseline.errors === 0 && l.addedP99 <= g.halfRateP99Max,
      rps: l.rate,
      p50: l.apk.p50,
      p99: l.apk.p99,
      ratio: null,
      note:
        `${invalid(l.apk.errors + l.baseline.errors)}${heldRate(l)}at ${Math.round(l.rate)} req/s: ` +
        `median of ${l.apk.runs.length} rounds' p99: baseline ${l.baseline.p99.toFixed(2)} ms ` +
        `(got ${Math.round(l.baseline.rps)} req/s), gateway ${l.apk.p99.toFixed(2)} ms ` +
        `(got ${Math.round(l.apk.rps)} req/s); per round baseline ` +
        `${l.baseline.runs.map((r) => r.p99.toFixed(1)).join('/')}, gateway ` +
        `${l.apk.runs.map((r) => r.p99.toFixed(1)).join('/')} ms`,
    },
    {
      id: id('bearer_throughput'),
      other: otherOf(bearerBase, bearer),
      figure: `${g.label}: bearer token, seen: throughput vs baseline`,
      measured: round(bearerRatio),
      unit: 'ratio',
      target: `>= ${g.bearerMin.toFixed(2)}`,
      pass: bearer.errors === 0 && bearerRatio >= g.bearerMin,
      rps: bearer.rps,
      p50: bearer.p50,
      p99: bearer.p99,
      ratio: bearerRatio,
      note: `${invalid(bearer.errors)}${bearer.requests} requests (RS256, oidc-provider)${
        g.throughput.bearerBaseline
          ? `; vs the baseline sent the same token (${Math.round(bearerBase.rps)} req/s)`
          : ''
      }`,
    },
    g.firstRequestFigure
      ? g.firstRequestFigure(f, g.firstRequestCpu)
      : {
          id: id('first_request_p99'),
          other: otherOf(g.firstRequestCpu),
          figure: `${g.label}: key never seen (first request): p99`,
          measured: round(f.fresh.p99),
          unit: 'ms',
          target: `<= ${g.firstRequestMax} ms`,
          pass: f.failures === 0 && f.fresh.p99 <= g.firstRequestMax,
          rps: null,
          p50: f.fresh.p50,
          p99: f.fresh.p99,
          ratio: null,
          note:
            `${invalid(f.failures)}${f.keys} fresh keys, one at a time (decision cache miss: nginx ` +
            `asks the sidecar); a seen key on the same connection: p50 ${f.seen.p50.toFixed(2)} ms, ` +
            `p99 ${f.seen.p99.toFixed(2)} ms`,
        },
  ];
  if (cacheOff) {
    const ratio = cacheOff.rps / baseline.rps;
    rows.push({
      id: id('cache_off_throughput'),
      other: otherOf(baseline, cacheOff),
      figure: `${g.label}: cache off (every request asks the sidecar)`,
      measured: round(ratio),
      unit: 'ratio',
      target: g.cacheOffMin === undefined ? '(reference)' : `>= ${g.cacheOffMin.toFixed(2)}`,
      pass: g.cacheOffMin === undefined ? null : cacheOff.errors === 0 && ratio >= g.cacheOffMin,
      rps: cacheOff.rps,
      p50: cacheOff.p50,
      p99: cacheOff.p99,
      ratio,
      note:
        `${invalid(cacheOff.errors)}${cacheOff.requests} requests with one API key; ` +
        'the same configuration with auth_cache.max_age_ms 0',
    });
  }
  return rows;
}

export function memoryFigure(memory: MemoryResult, samples: MemorySample[]): RawFigure {
  // Growth under the memory load only, from the sample taken as it began: the phases before
  // it allocate once (a list of 10^5 clients, a thousand first sights), and on a fast machine
  // the engine rows alone reach half the requests, which put those phases' one-off growth in
  // "the second half" (2026-11-26: +61 MB, of which +1.4 MB under the load).
  const withA = samples.filter((s) => s.sidecarA !== null && s.requests > 0);
  const firstLoad = withA.findIndex((s) => s.at === MEMORY_LOAD);
  const window = firstLoad > 0 ? withA.slice(firstLoad - 1) : withA;
  const start = window[0];
  const last = window.at(-1);
  // The latest sample at or before half the load's requests: growth over its second half.
  const half = start && last ? start.requests + (last.requests - start.requests) / 2 : 0;
  const mid = last ? window.filter((s) => s.requests <= half).at(-1) : undefined;
  const rss = last?.sidecarA ?? Number.NaN;
  const growth = last && mid ? last.sidecarA! - mid.sidecarA! : Number.NaN;
  const short = memory.requests < memory.wanted;
  return {
    id: 'sidecar_memory',
    other: otherOf(memory.load),
    figure: `sidecar RSS after ${memory.requests} auth. requests`,
    measured: round(rss, 1),
    unit: 'MB',
    target: '<= 150 MB, flat',
    pass: (memory.load?.errors ?? 0) === 0 && rss <= 150 && growth <= GROWTH_LIMIT_MB,
    rps: memory.load?.rps ?? null,
    p50: memory.load?.p50 ?? null,
    p99: memory.load?.p99 ?? null,
    ratio: null,
    note:
      `${invalid(memory.load?.errors ?? 0)}` +
      `${growth >= 0 ? '+' : ''}${growth.toFixed(1)} MB since ${mid?.requests ?? '?'} requests ` +
      `(growing: > ${GROWTH_LIMIT_MB} MB); ${memory.keys} keys rotated` +
      (short ? `; ${memory.wanted} did not fit in the time budget` : ''),
  };
}
