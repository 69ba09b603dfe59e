import { spawn } from 'node:child_process';

/**
 * Requests nginx answers on one HTTP/2 connection before it closes it: `keepalive_requests`,
 * 1000 by default, which bounds HTTP/2 connections too since nginx 1.19.7 (`http2_max_requests`
 * is obsolete there, and the gateway sets neither). After the 1000th request nginx sends GOAWAY;
 * h2load does not open a new connection in its place, so a run asking more of a connection than
 * this ends with that connection's remaining requests failed, and a `-D` (duration) run sits idle
 * once every connection has had its 1000. The bench's runs ask exactly this many of each.
 */
export const H2_REQUESTS_PER_CONNECTION = 1000;

/** What one HTTP/2 load sends: `connections` × `streams`, each connection to its limit. */
export interface H2Load {
  h2load: string;
  url: string;
  headers: Record<string, string>;
  connections: number;
  /** Concurrent streams per connection (h2load -m). */
  streams: number;
  /** Called with h2load's pid once it runs. */
  onStart?: (pid: number) => void;
}

export interface H2Result {
  /** Requests answered 2xx. */
  requests: number;
  /** Wall time of the invocation, as h2load measured it. */
  seconds: number;
  rps: number;
  /** Mean time per request, ms (h2load prints no percentiles). */
  mean: number;
  /** Requests not answered, or answered above 399: a valid run has none. */
  errors: number;
}

/** Pure: h2load's command line for one load (-t1: one client thread, as wrk's -t1). */
export function h2loadArgs(load: Omit<H2Load, 'h2load' | 'onStart'>): string[] {
  return [
    '-t1',
    `-c${load.connections}`,
    `-m${load.streams}`,
    `-n${load.connections * H2_REQUESTS_PER_CONNECTION}`,
    ...Object.entries(load.headers).flatMap(([name, value]) => [
      '-H',
      `${name.toLowerCase() === 'host' ? ':authority' : name.toLowerCase()}: ${value}`,
    ]),
    load.url,
  ];
}

/** Pure: h2load's summary as numbers; throws when a line it always prints is missing. */
export function parseH2load(out: string): H2Result {
  const finished = /finished in ([\d.]+)(m?s),/.exec(out);
  const requests =
    /requests: (\d+) total, (\d+) started, (\d+) done, (\d+) succeeded, (\d+) failed, (\d+) errored, (\d+) timeout/.exec(
      out,
    );
  const statuses = /status codes: (\d+) 2xx, (\d+) 3xx, (\d+) 4xx, (\d+) 5xx/.exec(out);
  const perRequest = /time for request:\s+\S+\s+\S+\s+([\d.]+)(us|ms|s)\b/.exec(out);
  if (!finished || !requests || !statuses) throw new Error(`h2load printed no summary:\n${out}`);
  const seconds = Number(finished[1]) / (finished[2] === 'ms' ? 1000 : 1);
  const total = Number(requests[1]);
  const ok = Number(statuses[1]);
  const toMs = { us: 1e-3, ms: 1, s: 1000 } as const;
  return {
    requests: ok,
    seconds,
    rps: seconds > 0 ? ok / seconds : 0,
    mean: perRequest ? Number(perRequest[1]) * toMs[perRequest[2] as keyof typeof toMs] : NaN,
    // Not 2xx, whatever the reason: failed, errored, timed out, or answered 3xx-5xx.
    errors: total - ok,
  };
}

/** One h2load invocation: every connection sends its H2_REQUESTS_PER_CONNECTION and closes. */
export async function runH2load(load: H2Load): Promise<H2Result> {
  const args = h2loadArgs(load);
  const child = spawn(load.h2load, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  if (child.pid !== undefined) load.onStart?.(child.pid);
  let out = '';
  child.stdout.on('data', (d: Buffer) => {
    out += d.toString('utf8');
  });
  child.stderr.on('data', (d: Buffer) => {
    out += d.toString('utf8');
  });
  const code = await new Promise<number | null>((resolve, reject) => {
    child.on('error', reject);
    child.on('exit', (c) => resolve(c));
  });
  if (code !== 0) throw new Error(`h2load ${args.join(' ')} failed (${code}):\n${out}`);
  return parseH2load(out);
}
