import { randomInt } from 'node:crypto';
import { join } from 'node:path';
import pg from 'pg';
import {
  insertKeyedClients,
  type KeyedClients,
  writeCredentialFile,
} from '../stack/distinct-keys.js';
import {
  type BenchKeyTable,
  controlSocketOf,
  counterGrowth,
  flushedCounters,
  type LuaCounters,
  waitForKeyTable,
  waitForSweep,
} from '../stack/nginx-control.js';
import { RANDOM_CREDENTIAL } from '../wrk/lua.js';
import { type Aggregate, aggregate } from './aggregate.js';
import {
  fastTargets,
  type MeasuredRun,
  measure,
  type PhaseContext,
  type Target,
} from './context.js';

/** How long the replica may take to hold rows inserted by SQL before the row goes on anyway. */
const SETTLE_TIMEOUT_MS = 60_000;
/** The gateway's warm-up: every key presented this many times on average, at most WARM_MAX_S. */
const WARM_PRESENTATIONS = 3;
const WARM_MAX_S = 15;

export interface DistinctKeysRow {
  /** Distinct keys the requests were spread over, uniformly. */
  keys: number;
  /** Seconds the INSERT of this row's new keys took, and until B's replica held them. */
  insertSeconds: number;
  settleSeconds: number;
  /** False: the replica did not hold them all within 60 s (the row is then suspect). */
  settled: boolean;
  /** B's key table after the wait and at the end of the row; null: this nginx holds none. */
  keyTable: BenchKeyTable | null;
  baseline: Aggregate;
  gateway: Aggregate;
  ratio: number;
  /** What B's Lua counters grew by over the gateway's runs (cache_miss: the sidecar asked). */
  counters: LuaCounters | null;
}

export interface DistinctKeysResult {
  rows: DistinctKeysRow[];
}

/**
 * Issue 38: callers spread uniformly over many keys, on gateway B (the static responder behind
 * it) against B's baseline sent the same requests. For each size (options.distinctKeys, then
 * distinctKeysLarge: the smaller set is the larger one's beginning), the missing clients are
 * inserted by SQL (bench/stack/distinct-keys.ts), the bench waits until B's replica holds them
 * (GET /key-table on B's control socket; an nginx without a key table: no wait), writes their
 * credentials to a file and runs wrk with RANDOM_CREDENTIAL (a random key of the file per
 * request) against both targets: a warm-up each, then alternating rounds, as the throughput
 * rows. Runs after the list-all phase: the rows before it see the table they always saw.
 */
export async function measureDistinctKeys(ctx: PhaseContext): Promise<DistinctKeysResult> {
  const { b, db, dir } = ctx.stack;
  const socket = controlSocketOf(b.home);
  const sizes = [ctx.options.distinctKeys, ctx.options.distinctKeysLarge];
  const t = fastTargets(ctx.stack);
  let keys: KeyedClients | undefined;
  const rows: DistinctKeysRow[] = [];
  for (const size of sizes) {
    const have = keys?.ids.length ?? 0;
    let insertSeconds = 0;
    if (size > have) {
      const made = await insertKeyedClients(db.url, size - have, keys);
      insertSeconds = made.seconds;
      keys = made;
    }
    if (!keys) throw new Error('no keys');
    const keyedRows = await keyedClientCount(db.url);
    const wait = await waitForKeyTable(socket, keyedRows, SETTLE_TIMEOUT_MS);
    ctx.say(
      `  ${size} keys: inserted in ${insertSeconds.toFixed(1)} s; ` +
        (wait.state
          ? `B's key table ${wait.settled ? 'holds' : 'DID NOT SETTLE at'} ${wait.state.records} records after ${wait.seconds.toFixed(1)} s`
          : 'B has no key table (nginx asks its sidecar about each new key)'),
    );
    // Each worker of B copies the table's records after a change it cannot follow (the SQL
    // insert's batches name more ids than a change slot holds): measured once that is done.
    const sweep = await waitForSweep(socket, SETTLE_TIMEOUT_MS);
    ctx.say(
      `  ${size} keys: B's workers copied ${sweep.copied} records in all, settled after ${sweep.seconds.toFixed(1)} s${sweep.settled ? '' : ' (STILL COPYING)'}`,
    );
    const file = join(dir, `keys-${size}.txt`);
    await writeCredentialFile(file, keys, size);
    const args = () => [file, String(randomInt(2 ** 31))];
    const baseline: Target = { ...t.baseline, name: `baseline ${size} keys` };
    const gateway: Target = { ...t.apk, name: `B ${size} keys` };
    for (const target of [baseline, gateway]) {
      // The gateway's warm-up lasts until every key has been presented WARM_PRESENTATIONS times
      // on average (at most WARM_MAX_S). It is how the workers' copies of the records got warm
      // before they were swept ahead of requests (with 3 s at 10^5 keys each worker had seen
      // about a third of them, and the rounds rose from 0.86 to 0.92); since the sweep
      // (waitForSweep above, docs/decisions/20261129-worker-copies-kept.md) it only adds
      // presentations, kept so that the row's method did not change with the module. The
      // baseline keeps nothing per key.
      let requests = 0;
      let seconds = 0;
      do {
        const warm = await measure(
          ctx,
          target,
          ctx.options.warmupSeconds,
          RANDOM_CREDENTIAL,
          args(),
        );
        requests += warm.requests;
        seconds += ctx.options.warmupSeconds;
        ctx.say(`  warm-up ${target.name}: ${Math.round(warm.rps)} req/s`);
      } while (
        target === gateway &&
        requests < WARM_PRESENTATIONS * size &&
        seconds + ctx.options.warmupSeconds <= WARM_MAX_S
      );
    }
    const runs = new Map<Target, MeasuredRun[]>([
      [baseline, []],
      [gateway, []],
    ]);
    // Only the gateway's runs reach B: its counters' growth over the rounds is theirs.
    const before = await flushedCounters(socket);
    for (let round = 0; round < ctx.options.rounds; round += 1) {
      for (const target of round % 2 === 0 ? [baseline, gateway] : [gateway, baseline]) {
        const run = await measure(ctx, target, ctx.options.seconds, RANDOM_CREDENTIAL, args());
        runs.get(target)!.push(run);
        ctx.say(
          `  round ${round + 1} ${target.name.padEnd(18)} ${Math.round(run.rps)} req/s, p50 ${run.p50.toFixed(2)} ms, p99 ${run.p99.toFixed(2)} ms`,
        );
      }
    }
    const counters = counterGrowth(before, await flushedCounters(socket));
    const base = aggregate(baseline.name, runs.get(baseline)!);
    const gw = aggregate(gateway.name, runs.get(gateway)!);
    rows.push({
      keys: size,
      insertSeconds,
      settleSeconds: wait.seconds,
      settled: wait.settled,
      keyTable: wait.state,
      baseline: base,
      gateway: gw,
      ratio: gw.rps / base.rps,
      counters,
    });
  }
  return { rows };
}

async function keyedClientCount(databaseUrl: string): Promise<number> {
  const db = new pg.Client({ connectionString: databaseUrl });
  await db.connect();
  try {
    const { rows } = await db.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM api_clients WHERE key_hash IS NOT NULL',
    );
    return rows[0]?.n ?? 0;
  } finally {
    await db.end();
  }
}
