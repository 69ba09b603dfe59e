import { randomInt } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { settingsObjectSchema } from '../../generator/settings-schema.js';
import { freePort } from '../../native/ports.js';
import { migrate } from '../../sidecar/db/migrate.js';
import { createPool } from '../../sidecar/db/pool.js';
import { silentLogger } from '../../sidecar/log.js';
import type { Cleanup } from '../cleanup.js';
import { type CpuSplit, cpuWindow } from '../cpu-split.js';
import { renderGatewayConfig } from '../stack/app-upstream.js';
import { startBaseline } from '../stack/baseline.js';
import { insertKeyedClients, writeCredentialFile } from '../stack/distinct-keys.js';
import { BENCH_PATH } from '../stack/engine-session.js';
import { startGateway } from '../stack/gateway.js';
import {
  type BenchKeyTable,
  controlSocketOf,
  counterGrowth,
  flushedCounters,
  keyTableState,
  type LuaCounters,
  nginxSharedMemory,
  nginxWorkersPrivateMb,
  waitForKeyTable,
  waitForSweep,
} from '../stack/nginx-control.js';
import { startSharedDatabase } from '../stack/postgres.js';
import { startStaticUpstream } from '../stack/static-upstream.js';
import { mean } from '../stats.js';
import { RANDOM_CREDENTIAL } from '../wrk/lua.js';
import { runWrk, type WrkResult } from '../wrk/run.js';

/** Issue 38's targets at 10^6 keys. */
export const SCALE_DISTINCT_MIN = 0.85;
export const SCALE_SHARED_MEMORY_MAX_MB = 256;

export interface ScaleDistinctKeys {
  keys: number;
  insertSeconds: number;
  /** From the gateway's start until its replica was complete (null: no key table). */
  loadWaitSeconds: number;
  /** False: the replica was full, or not complete within 600 s (loadWaitSeconds: the wait). */
  settled: boolean;
  /** nginx's workers sweeping the loaded table into their copies: records copied (all workers), the wait. */
  sweep: { copied: number; seconds: number; settled: boolean };
  /** Each nginx worker's private resident memory after the runs, MB (its copies of the records among it). */
  workersPrivateMb: number[];
  keyTable: BenchKeyTable | null;
  /** The key table's size setting the gateway ran with (null: the settings have none). */
  keyTableSize: string | null;
  /** The sidecar's gauges (gateway_key_table_*) as its /metrics gave them, if it has them. */
  sidecarGauges: Record<string, number>;
  /** nginx's shared zones from /proc/<pid>/smaps: reserved size per zone and in all, MB. */
  sharedMemory: { zones: { sizeMb: number; residentMb: number }[]; totalMb: number } | null;
  baseline: { rps: number; p99: number; requests: number; runs: number[] };
  gateway: { rps: number; p99: number; requests: number; runs: number[] };
  errors: number;
  ratio: number;
  counters: LuaCounters | null;
  cpu: CpuSplit | null;
}

/** `--distinct-keys N` (default 10^6; 0: no such row) and `--key-table-size` (default 192m: 10^6 records of about 160 bytes, and room). */
export function parseDistinctKeys(argv: string[]): { keys: number; keyTableSize: string } {
  const at = argv.indexOf('--distinct-keys');
  const keys = at < 0 ? 1_000_000 : Number(argv[at + 1]);
  if (!Number.isInteger(keys) || keys < 0 || keys > 9_000_000) {
    throw new Error('--distinct-keys takes an integer from 0 to 9000000');
  }
  const sizeAt = argv.indexOf('--key-table-size');
  const keyTableSize = sizeAt < 0 ? '192m' : (argv[sizeAt + 1] ?? '');
  if (!/^[1-9][0-9]{0,5}[km]$/.test(keyTableSize)) {
    throw new Error('--key-table-size takes a size such as 256m');
  }
  return { keys, keyTableSize };
}

export interface DistinctKeysOptions {
  keys: number;
  keyTableSize: string;
  seconds: number;
  rounds: number;
  warmupSeconds: number;
  connections: number;
}

/**
 * Issue 38's scale row: callers spread uniformly over 10^6 distinct keys, against the same
 * nginx with authentication off, and the shared memory that takes. Its own PostgreSQL (the
 * scale rows' table holds half a million keys whose secrets nobody knows): migrated, then
 * filled with `keys` keyed clients by SQL before the gateway starts, so the replica is loaded
 * whole when the pair starts (its load time is part of the row). The gateway runs with the
 * static responder as its app and `key_table.size` as asked; its auth-off baseline is derived
 * from its default.conf as `npm run bench`'s is. wrk (-t1) draws one of the keys per request.
 */
export async function measureScaleDistinctKeys(
  dir: string,
  cleanup: Cleanup,
  wrk: string,
  o: DistinctKeysOptions,
  say: (line: string) => void,
): Promise<ScaleDistinctKeys> {
  const db = await startSharedDatabase(join(dir, 'pg-keys'));
  cleanup.add('PostgreSQL (distinct keys)', db.stop);
  const pool = createPool(db.url, silentLogger);
  try {
    await migrate(pool, silentLogger);
  } finally {
    await pool.end();
  }
  const made = await insertKeyedClients(db.url, o.keys);
  say(`distinct keys: ${o.keys} keyed clients inserted in ${made.seconds.toFixed(1)} s`);
  const credentials = join(dir, 'keys.txt');
  await writeCredentialFile(credentials, made);

  const responder = await startStaticUpstream(join(dir, 'static'));
  cleanup.add('static upstream nginx', responder.stop);
  const home = join(dir, 'k');
  const knowsKeyTable = 'key_table' in settingsObjectSchema.shape;
  const settingsFile = join(dir, 'keys-gateway.yaml');
  await writeFile(
    settingsFile,
    [
      'failure_budget:',
      '  per_address: 0',
      ...(knowsKeyTable ? ['key_table:', `  size: ${o.keyTableSize}`] : []),
      '',
    ].join('\n'),
  );
  // The static responder is the application (the runner then starts no engine of its own).
  const env = { GATEWAY_SETTINGS: settingsFile, GATEWAY_APP_UPSTREAM: responder.upstream };
  const port = await freePort();
  await renderGatewayConfig(
    home,
    { ...env, GATEWAY_FQDN: 'localhost', GATEWAY_HTTPS_PORT: `${port}` },
    responder.upstream,
  );
  const started = performance.now();
  const gw = await startGateway({
    name: 'keys',
    home,
    databaseUrl: db.url,
    createKey: false,
    env,
    engineAdminPassword: 'unused-by-the-static-upstream',
    port,
  });
  cleanup.add('gateway (distinct keys)', gw.stop);
  const socket = controlSocketOf(home);
  const wait = await waitForKeyTable(socket, o.keys, 600_000);
  const loadWaitSeconds = (performance.now() - started) / 1000;
  say(
    wait.state
      ? `distinct keys: the replica ${wait.settled ? 'holds' : 'DID NOT COMPLETE with'} ${wait.state.records} records ${loadWaitSeconds.toFixed(1)} s after the gateway's start`
      : 'distinct keys: this gateway has no key table (nginx asks its sidecar about each key)',
  );
  // Measured once each worker has copied the table (a pair some seconds after its start).
  const sweep = await waitForSweep(socket, 300_000);
  say(
    `distinct keys: nginx's workers copied ${sweep.copied} records ${sweep.seconds.toFixed(1)} s after the load${sweep.settled ? '' : ' (STILL COPYING)'}`,
  );
  const baseline = await startBaseline(join(dir, 'keys-baseline'), gw.configDir);
  cleanup.add('baseline nginx (distinct keys)', baseline.stop);

  const headers = { Host: 'localhost' };
  const run = (url: string, seconds: number, onStart?: (pid: number) => void) =>
    runWrk({
      wrk,
      url: `${url}${BENCH_PATH}`,
      headers,
      seconds,
      threads: 1,
      connections: o.connections,
      script: RANDOM_CREDENTIAL,
      scriptArgs: [credentials, String(randomInt(2 ** 31))],
      scriptDir: dir,
      ...(onStart ? { onStart } : {}),
    });
  for (const [name, url] of [
    ['baseline', baseline.url],
    ['gateway', gw.url],
  ] as const) {
    const warm = await run(url, o.warmupSeconds);
    say(`distinct keys: warm-up ${name}: ${Math.round(warm.rps)} req/s`);
  }
  const runs: Record<'baseline' | 'gateway', WrkResult[]> = { baseline: [], gateway: [] };
  // Only the gateway's runs reach it: its counters' growth over the rounds is theirs.
  const before = await flushedCounters(socket);
  const roots = {
    nginx: gw.pids.nginx,
    sidecar: gw.pids.sidecar,
    'static upstream': responder.pid,
    postgres: db.pid,
  };
  const splits: CpuSplit[] = [];
  for (let round = 0; round < o.rounds; round += 1) {
    const order =
      round % 2 === 0 ? (['baseline', 'gateway'] as const) : (['gateway', 'baseline'] as const);
    for (const which of order) {
      let wrkPid: number | undefined;
      // Inside the run (0.5 s after its start to 0.5 s before its end), wrk still running.
      const split =
        which === 'gateway' && o.seconds >= 2
          ? cpuWindow(() => ({ ...roots, wrk: wrkPid }), 0.5, o.seconds - 1)
          : null;
      const r = await run(which === 'gateway' ? gw.url : baseline.url, o.seconds, (pid) => {
        wrkPid = pid;
      });
      if (split) splits.push(await split);
      runs[which].push(r);
      say(
        `distinct keys: round ${round + 1} ${which.padEnd(8)} ${Math.round(r.rps)} req/s, p99 ${r.p99.toFixed(2)} ms`,
      );
    }
  }
  const counters = counterGrowth(before, await flushedCounters(socket));
  const after = await keyTableState(socket);
  const of = (rs: WrkResult[]) => ({
    rps: rs.reduce((a, r) => a + r.requests, 0) / rs.reduce((a, r) => a + r.seconds, 0),
    p99: mean(rs.map((r) => r.p99)),
    requests: rs.reduce((a, r) => a + r.requests, 0),
    runs: rs.map((r) => Math.round(r.rps)),
  });
  const errorsOf = (rs: WrkResult[]) =>
    rs.reduce(
      (a, r) =>
        a + r.errors.connect + r.errors.read + r.errors.write + r.errors.status + r.errors.timeout,
      0,
    );
  const b = of(runs.baseline);
  const g = of(runs.gateway);
  return {
    keys: o.keys,
    insertSeconds: made.seconds,
    loadWaitSeconds,
    settled: wait.settled,
    sweep,
    keyTable: after ?? wait.state,
    keyTableSize: knowsKeyTable ? o.keyTableSize : null,
    sidecarGauges: await sidecarGauges(gw.metricsUrl),
    sharedMemory: await nginxSharedMemory(gw.pids.nginx),
    workersPrivateMb: await nginxWorkersPrivateMb(gw.pids.nginx),
    baseline: b,
    gateway: g,
    errors: errorsOf(runs.baseline) + errorsOf(runs.gateway),
    ratio: g.rps / b.rps,
    counters,
    cpu: splits.length ? meanSplit(splits) : null,
  };
}

function meanSplit(splits: CpuSplit[]): CpuSplit {
  const out: CpuSplit = {};
  for (const name of Object.keys(splits[0]!)) out[name] = mean(splits.map((s) => s[name] ?? 0));
  return out;
}

/** The sidecar's `gateway_key_table_*` gauges, from its Prometheus text ({} when absent). */
async function sidecarGauges(metricsUrl: string): Promise<Record<string, number>> {
  try {
    const res = await fetch(`${metricsUrl}/metrics`);
    return keyTableGauges(await res.text());
  } catch {
    return {};
  }
}

/** Pure: the `gateway_key_table_*` samples of a Prometheus text (no labels), by name. */
export function keyTableGauges(text: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const line of text.split('\n')) {
    const m = /^(gateway_key_table_\w+) (\S+)$/.exec(line);
    if (m && Number.isFinite(Number(m[2]))) out[m[1]!] = Number(m[2]);
  }
  return out;
}
