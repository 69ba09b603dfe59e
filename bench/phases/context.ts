import type { Budget } from '../budget.js';
import type { CpuSplit, ProcessRoots } from '../cpu-split.js';
import { cpuWindow } from '../cpu-split.js';
import type { BenchOptions } from '../options.js';
import { rssMb } from '../rss.js';
import { BENCH_PATH } from '../stack/engine-session.js';
import type { BenchStack } from '../stack/setup.js';
import { runWrk, type WrkResult } from '../wrk/run.js';
import { alongsideFlood, type Flood, type FloodRun } from './flood.js';

/** What the memory phase's own samples are called (its figure's growth is measured over them). */
export const MEMORY_LOAD = 'memory load';

export interface MemorySample {
  /** Authenticated requests gateway A had answered when the sample was taken. */
  requests: number;
  /** VmRSS of sidecar A, and of sidecar B (the fast rows' pair, not the memory load), in MB. */
  sidecarA: number | null;
  sidecarB: number | null;
  at: string;
}

/** What every phase gets: the stack, the options, the clock, and the memory log of A. */
export interface PhaseContext {
  stack: BenchStack;
  options: BenchOptions;
  wrk: string;
  budget: Budget;
  say(line: string): void;
  /** Counts requests that gateway A authenticated (for "after N requests"). */
  countA(requests: number): void;
  /** Samples the sidecars' RSS now, labelled with the phase that just ended. */
  sampleMemory(at: string): Promise<void>;
  memory: MemorySample[];
  /**
   * Processes a phase started for itself (the balancer), whose CPU its runs account for beside
   * the stack's; the phase removes them when it stops them.
   */
  extraRoots: ProcessRoots;
}

export function phaseContext(
  init: Omit<PhaseContext, 'countA' | 'sampleMemory' | 'memory' | 'extraRoots'>,
): PhaseContext {
  let requestsA = 0;
  const memory: MemorySample[] = [];
  return {
    ...init,
    memory,
    extraRoots: {},
    countA(n) {
      requestsA += n;
    },
    async sampleMemory(at) {
      const { a, b } = init.stack;
      const mb = (pid: number | undefined) => {
        const rss = rssMb(pid);
        return Number.isNaN(rss) ? null : rss;
      };
      memory.push({
        requests: requestsA,
        sidecarA: mb(a.pids.sidecar),
        sidecarB: mb(b.pids.sidecar),
        at,
      });
    },
  };
}

/** Where wrk sends its load, and with which headers (the same path for every target). */
export interface Target {
  name: string;
  url: string;
  headers: Record<string, string>;
  /** True when gateway A authenticates these requests (they count for the memory row). */
  authenticatedByA: boolean;
  /** Wrong secrets sent by a second wrk throughout each run of this target. */
  flood?: Flood;
}

/** `key` as an API key to `base` (a gateway, a copy of one, a balancer), on the bench's path. */
export const apkTarget = (name: string, base: string, key: string): Target => ({
  name,
  url: `${base}${BENCH_PATH}`,
  headers: { Host: 'localhost', Authorization: `apk ${key}` },
  authenticatedByA: false,
});

/** The targets of one group of rows: a gateway, its auth-off baseline, the same path. */
export interface TargetSet {
  baseline: Target;
  apk: Target;
  bearer: Target;
  /**
   * The baseline sent the bearer target's header (fast group only): a 700-byte token costs
   * nginx and the client TLS and parsing whether anyone checks it, so the bearer row compares
   * the same requests, authentication on and off.
   */
  bearerBaseline?: Target;
  /** The same gateway with its decision cache off (fast group only). */
  cacheOff?: Target;
  /** `apk` again, with a flood of wrong secrets for its client id beside it (fast group only). */
  flooded?: Target;
}

/** The engine rows: gateway A and its baseline, the engine behind both. */
export function targets(stack: BenchStack): TargetSet {
  const common = { Host: 'localhost', Cookie: stack.cookieA };
  return {
    baseline: {
      name: 'baseline',
      url: `${stack.baseline.url}${BENCH_PATH}`,
      headers: common,
      authenticatedByA: false,
    },
    apk: {
      name: 'API key',
      url: `${stack.a.url}${BENCH_PATH}`,
      headers: { ...common, Authorization: `apk ${stack.apiKey}` },
      authenticatedByA: true,
    },
    bearer: {
      name: 'bearer token',
      url: `${stack.a.url}${BENCH_PATH}`,
      headers: { ...common, Authorization: `Bearer ${stack.bearerToken}` },
      authenticatedByA: true,
    },
  };
}

/**
 * The fast-upstream rows: gateway B, B's baseline and B's cache-off copy, the static
 * responder behind all three (it needs no cookie: the requests carry only what auth needs).
 */
export function fastTargets(stack: BenchStack): TargetSet {
  const common = { Host: 'localhost' };
  const apk = { ...common, Authorization: `apk ${stack.apiKey}` };
  const bearer = { ...common, Authorization: `Bearer ${stack.bearerToken}` };
  const url = `${stack.b.url}${BENCH_PATH}`;
  const baselineUrl = `${stack.fast.baseline.url}${BENCH_PATH}`;
  return {
    // The same requests as the gateway's rows, authentication off: the apk header (the cache-off
    // and flood rows send it too), and the bearer header for the bearer row.
    baseline: { name: 'fast baseline', url: baselineUrl, headers: apk, authenticatedByA: false },
    bearerBaseline: {
      name: 'fast baseline+token',
      url: baselineUrl,
      headers: bearer,
      authenticatedByA: false,
    },
    apk: { name: 'fast API key', url, headers: apk, authenticatedByA: false },
    bearer: { name: 'fast bearer', url, headers: bearer, authenticatedByA: false },
    cacheOff: {
      name: 'fast no cache',
      url: `${stack.fast.cacheOff.url}${BENCH_PATH}`,
      headers: apk,
      authenticatedByA: false,
    },
    // Issue 23: the same valid traffic as `apk`, while the flood guesses secrets of its client.
    flooded: {
      name: 'fast apk+flood',
      url,
      headers: apk,
      authenticatedByA: false,
      flood: { url, headers: common, clientId: stack.apiKey.split('.', 1)[0]! },
    },
  };
}

export interface MeasuredRun extends WrkResult {
  target: string;
  /** Cores used per process tree during the middle of the run. */
  cpu: CpuSplit | null;
  /** The flood beside this run, when its target has one. */
  flood?: FloodRun;
}

/**
 * One wrk run with the run's thread and connection settings (identical for every target),
 * with the CPU split sampled inside it (0.5 s after the start to 0.5 s before the end), and the
 * target's flood beside it when it has one.
 */
export async function measure(
  ctx: PhaseContext,
  target: Target,
  seconds: number,
  script: string,
  scriptArgs: string[] = [],
): Promise<MeasuredRun> {
  const { flood } = target;
  if (!flood) return measureAlone(ctx, target, seconds, script, scriptArgs);
  const where = { wrk: ctx.wrk, scriptDir: ctx.stack.dir };
  const both = await alongsideFlood(where, flood, seconds, (floodPid) =>
    measureAlone(ctx, target, seconds, script, scriptArgs, floodPid),
  );
  return { ...both.result, flood: both.flood };
}

async function measureAlone(
  ctx: PhaseContext,
  target: Target,
  seconds: number,
  script: string,
  scriptArgs: string[],
  floodPid?: () => number | undefined,
): Promise<MeasuredRun> {
  let wrkPid: number | undefined;
  const window = seconds >= 2 ? seconds - 1 : 0;
  const roots = () => ({
    ...ctx.stack.roots(wrkPid),
    ...ctx.extraRoots,
    ...(floodPid ? { 'wrk flood': floodPid() } : {}),
  });
  const cpu = window > 0 ? cpuWindow(roots, 0.5, window) : Promise.resolve(null);
  const result = await runWrk({
    wrk: ctx.wrk,
    url: target.url,
    headers: target.headers,
    seconds,
    threads: ctx.options.wrkThreads,
    connections: ctx.options.wrkConnections,
    script,
    scriptArgs,
    scriptDir: ctx.stack.dir,
    onStart: (pid) => {
      wrkPid = pid;
    },
  });
  if (target.authenticatedByA) ctx.countA(result.requests);
  return { ...result, target: target.name, cpu: await cpu };
}
