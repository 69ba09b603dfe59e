import { randomInt } from 'node:crypto';
import { FLOOD } from '../wrk/lua.js';
import { runWrk, type WrkResult } from '../wrk/run.js';

/** Issue 23: the attacker's connections, each sending wrong secrets as fast as it is answered. */
export const FLOOD_CONNECTIONS = 64;

/**
 * Lead of the flood before the measured run starts: its 64 TLS handshakes are done and it is
 * at full rate (the CPU window of the measured run opens 0.5 s later still).
 */
const LEAD_MS = 500;

/** Wrong secrets for an existing client id, sent beside a measured run. */
export interface Flood {
  url: string;
  /** Everything but the credential, which the flood script makes per request. */
  headers: Record<string, string>;
  /** The id of the key under attack (the valid traffic's own client). */
  clientId: string;
  /** Another flood than FLOOD (with its own arguments): the balancer row's fixed-rate floods. */
  script?: { lua: string; args: string[] };
}

/** One flood, from its start (LEAD_MS before the measured run) to the measured run's end. */
export interface FloodRun {
  requests: number;
  seconds: number;
  rps: number;
  /** Answers by status, as the gateway chose them. */
  statuses: Record<string, number>;
  /** Connect, read, write errors and timeouts of the flood's own connections. */
  socketErrors: number;
  /** Why this run was not flooded throughout (wrk failed or ended early); absent when it was. */
  failed?: string;
}

/**
 * Runs `measured` while a second wrk (its own process, one thread, FLOOD_CONNECTIONS
 * connections, the FLOOD script written to `where.scriptDir`) presents random secrets for
 * `flood.clientId`. The flood is stopped with SIGINT when `measured` ends (wrk then prints its
 * summary as at the end of `-d`); `floodPid` gives its pid to the measured run's CPU split.
 */
export async function alongsideFlood<T>(
  where: { wrk: string; scriptDir: string },
  flood: Flood,
  seconds: number,
  measured: (floodPid: () => number | undefined) => Promise<T>,
): Promise<{ result: T; flood: FloodRun }> {
  let pid: number | undefined;
  let ended = false;
  const wrk = runWrk({
    wrk: where.wrk,
    url: flood.url,
    headers: flood.headers,
    // A bound only: SIGINT ends it when the measured run does.
    seconds: seconds + 10,
    threads: 1,
    connections: FLOOD_CONNECTIONS,
    script: flood.script?.lua ?? FLOOD,
    scriptArgs: flood.script?.args ?? [flood.clientId, String(randomInt(2 ** 31))],
    scriptDir: where.scriptDir,
    onStart: (p) => {
      pid = p;
    },
  }).then(
    (r) => ({ ok: true as const, r }),
    (err: unknown) => ({ ok: false as const, why: (err as Error).message.split('\n', 1)[0]! }),
  );
  void wrk.then(() => {
    ended = true;
  });
  await new Promise((r) => setTimeout(r, LEAD_MS));
  let endedEarly = false;
  let result: T;
  try {
    result = await measured(() => pid);
  } finally {
    endedEarly = ended;
    if (pid !== undefined && !ended) {
      try {
        process.kill(pid, 'SIGINT');
      } catch {
        // exited between the check and the signal
      }
    }
  }
  const outcome = await wrk;
  if (!outcome.ok) return { result, flood: failedRun(`flood wrk failed: ${outcome.why}`) };
  const run = floodRun(outcome.r);
  return {
    result,
    flood: endedEarly ? { ...run, failed: 'the flood ended before the measured run' } : run,
  };
}

function floodRun(r: WrkResult): FloodRun {
  const e = r.errors;
  return {
    requests: r.requests,
    seconds: r.seconds,
    rps: r.rps,
    statuses: r.statuses ?? {},
    socketErrors: e.connect + e.read + e.write + e.timeout,
  };
}

const failedRun = (why: string): FloodRun => ({
  requests: 0,
  seconds: 0,
  rps: 0,
  statuses: {},
  socketErrors: 0,
  failed: why,
});

/** The floods of every flooded run taken together; 401 and 429 apart, every other status summed. */
export interface FloodSummary {
  runs: number;
  /** Runs not flooded throughout, with the reason: any makes the row invalid. */
  failed: string[];
  requests: number;
  rps: number;
  refused401: number;
  refused429: number;
  other: number;
  statuses: Record<string, number>;
  socketErrors: number;
}

export function summariseFlood(runs: FloodRun[]): FloodSummary {
  const statuses: Record<string, number> = {};
  for (const run of runs)
    for (const [status, n] of Object.entries(run.statuses))
      statuses[status] = (statuses[status] ?? 0) + n;
  const requests = runs.reduce((a, r) => a + r.requests, 0);
  const seconds = runs.reduce((a, r) => a + r.seconds, 0);
  const counted = Object.values(statuses).reduce((a, n) => a + n, 0);
  return {
    runs: runs.length,
    failed: runs.flatMap((r) => (r.failed ? [r.failed] : [])),
    requests,
    rps: seconds > 0 ? requests / seconds : 0,
    refused401: statuses['401'] ?? 0,
    refused429: statuses['429'] ?? 0,
    other: counted - (statuses['401'] ?? 0) - (statuses['429'] ?? 0),
    statuses,
    socketErrors: runs.reduce((a, r) => a + r.socketErrors, 0),
  };
}

/** What the flood beside a run did, for the progress line. */
export function floodLine(run: { flood?: FloodRun | undefined }): string {
  const f = run.flood;
  if (!f) return '';
  if (f.failed) return `; FLOOD: ${f.failed}`;
  const statuses = Object.entries(f.statuses)
    .map(([status, n]) => `${status} ${n}`)
    .join(', ');
  return `; flood ${Math.round(f.rps)} req/s (${statuses || 'no answers'})`;
}
