import { type CpuSplit, cpuMeter } from '../cpu-split.js';
import { H2_REQUESTS_PER_CONNECTION, type H2Result, runH2load } from '../h2load/run.js';
import { BENCH_PATH } from '../stack/engine-session.js';
import type { PhaseContext } from './context.js';

/** Issue 49's shape of HTTP/2 client: 16 connections, 8 streams open on each. */
export const H2_CONNECTIONS = 16;
export const H2_STREAMS = 8;

/** One measured run of a target: back-to-back h2load invocations for the run's seconds. */
export interface H2Run {
  target: string;
  requests: number;
  seconds: number;
  rps: number;
  /** h2load invocations in the run (each: every connection opened, sent its 1000, closed). */
  invocations: number;
  errors: number;
  /** Mean over the invocations of h2load's mean time per request, ms. */
  mean: number;
  cpu: CpuSplit | null;
}

export interface H2Aggregate {
  target: string;
  rps: number;
  requests: number;
  errors: number;
  runs: H2Run[];
}

export interface Http2Result {
  baseline: H2Aggregate;
  apk: H2Aggregate;
  /** Gateway B's `gateway_nginx_module_hits_total` over the API-key runs (null: not read). */
  moduleHits: number | null;
}

const MODULE_HITS = 'gateway_nginx_module_hits_total';

/** Sidecar B's count of the nginx module's hits so far (its /metrics), or null. */
async function moduleHits(metricsUrl: string): Promise<number | null> {
  try {
    const text = await (await fetch(`${metricsUrl}/metrics`)).text();
    const line = text.split('\n').find((l) => l.startsWith(`${MODULE_HITS} `));
    return line ? Number(line.slice(MODULE_HITS.length + 1)) : null;
  } catch {
    return null;
  }
}

/** Pure: a target's runs taken together (all requests over all seconds). */
export function aggregateH2(target: string, runs: H2Run[]): H2Aggregate {
  const requests = runs.reduce((a, r) => a + r.requests, 0);
  const seconds = runs.reduce((a, r) => a + r.seconds, 0);
  return {
    target,
    rps: seconds > 0 ? requests / seconds : 0,
    requests,
    errors: runs.reduce((a, r) => a + r.errors, 0),
    runs,
  };
}

/**
 * Issue 49's row: a seen API key over HTTP/2 on gateway B (static responder behind) against
 * B's auth-off baseline sent the same requests, h2load with H2_CONNECTIONS × H2_STREAMS.
 * nginx closes an HTTP/2 connection after 1000 requests (H2_REQUESTS_PER_CONNECTION), and
 * h2load does not reopen it; so each h2load invocation asks exactly 1000 of each connection
 * (all answered, then closed by nginx's GOAWAY), and a run is such invocations back to back for
 * `seconds` (each new connection's TLS handshake is in the run, for both targets alike: 16 per
 * 16,000 requests). Alternating rounds as the wrk rows; a warm-up invocation of each first
 * (none in a quick run).
 */
export async function measureHttp2(ctx: PhaseContext, h2load: string): Promise<Http2Result> {
  const { stack } = ctx;
  const headers = { Host: 'localhost', Authorization: `apk ${stack.apiKey}` };
  const targets = [
    { name: 'fast h2 baseline', url: `${stack.fast.baseline.url}${BENCH_PATH}` },
    { name: 'fast h2 API key', url: `${stack.b.url}${BENCH_PATH}` },
  ];
  let pid: number | undefined;
  const once = (url: string): Promise<H2Result> =>
    runH2load({
      h2load,
      url,
      headers,
      connections: H2_CONNECTIONS,
      streams: H2_STREAMS,
      onStart: (p) => {
        pid = p;
      },
    });
  const run = async (target: (typeof targets)[number], seconds: number): Promise<H2Run> => {
    const stop = await cpuMeter(() => ({ ...stack.roots(), h2load: pid }));
    const parts: H2Result[] = [];
    const started = performance.now();
    do parts.push(await once(target.url));
    while (performance.now() - started < seconds * 1000);
    const cpu = await stop();
    const requests = parts.reduce((a, p) => a + p.requests, 0);
    const took = parts.reduce((a, p) => a + p.seconds, 0);
    return {
      target: target.name,
      requests,
      seconds: took,
      rps: took > 0 ? requests / took : 0,
      invocations: parts.length,
      errors: parts.reduce((a, p) => a + p.errors, 0),
      mean: parts.reduce((a, p) => a + p.mean, 0) / parts.length,
      cpu,
    };
  };
  // A quick run has no warm-up, as the permissions row (each invocation is 16,000 requests).
  if (!ctx.options.quick) {
    for (const target of targets) {
      const warm = await once(target.url);
      ctx.say(`  warm-up ${target.name}: ${Math.round(warm.rps)} req/s`);
    }
  }
  const hitsBefore = await moduleHits(stack.b.metricsUrl);
  const runs = new Map(targets.map((t) => [t.name, [] as H2Run[]]));
  for (let round = 0; round < ctx.options.rounds; round += 1) {
    for (const target of round % 2 === 0 ? targets : [...targets].reverse()) {
      const r = await run(target, ctx.options.seconds);
      runs.get(target.name)!.push(r);
      ctx.say(
        `  round ${round + 1} ${target.name.padEnd(16)} ${Math.round(r.rps)} req/s, ${r.invocations} × ${H2_CONNECTIONS * H2_REQUESTS_PER_CONNECTION} requests, mean ${r.mean.toFixed(2)} ms${r.errors ? `, ${r.errors} ERRORS` : ''}`,
      );
    }
  }
  // nginx's counters reach the sidecar's /metrics when it scrapes nginx: read it once more after
  // the workers' once-a-second flush.
  await new Promise((r) => setTimeout(r, 2_500));
  const hitsAfter = await moduleHits(stack.b.metricsUrl);
  return {
    baseline: aggregateH2(targets[0]!.name, runs.get(targets[0]!.name)!),
    apk: aggregateH2(targets[1]!.name, runs.get(targets[1]!.name)!),
    moduleHits: hitsBefore === null || hitsAfter === null ? null : hitsAfter - hitsBefore,
  };
}
