import { join } from 'node:path';

/** Everything a run can be told; `--quick` picks the small set the smoke test uses. */
export interface BenchOptions {
  quick: boolean;
  /** Seconds of each measured wrk run (throughput and fixed-rate latency). */
  seconds: number;
  /** Seconds of warm-up per target before the first measured run (JIT, connection pools). */
  warmupSeconds: number;
  /** Alternating rounds; ABC then CBA, so slow drift on a shared machine hits every target. */
  rounds: number;
  /**
   * Alternating rounds (and their length) of the fixed-rate latency row. A tail percentile on a
   * shared 2-core machine swings by a factor of 4 between identical runs, so this row takes
   * more, shorter rounds and the median of their p99s.
   */
  latencyRounds: number;
  latencySeconds: number;
  wrkThreads: number;
  wrkConnections: number;
  /** Fresh API keys, each used for exactly one request. */
  freshKeys: number;
  /** Sequential creates for the create p50. */
  creates: number;
  /** Clients in the table when it is listed. */
  listClients: number;
  listRuns: number;
  /**
   * Clients in the table while a list of all of them streams on gateway B, and the fresh keys
   * presented meanwhile (issue 23).
   */
  listAllClients: number;
  listAllProbes: number;
  /**
   * Issue 38: distinct keys the callers are spread over (uniformly), in two rows: the smaller
   * set is the first part of the larger. Made by SQL; gateway B's replica holds them all.
   */
  distinctKeys: number;
  distinctKeysLarge: number;
  /**
   * Issue 38's balancer row: each flood's fixed rate, as a share of the valid traffic's maximum
   * rate through the balancer alone (measured in its warm-up).
   */
  balancerFloodShare: number;
  /**
   * The balancer row's alternating rounds (of `seconds` each flood). Its rounds' ratios moved by
   * ±0.1 between identical pairs on the 2-core VM (HAProxy's one thread, two wrks and nginx on
   * two cores), so it takes twice the rounds of the throughput rows.
   */
  balancerRounds: number;
  /** Keys deleted while both pairs use them, and how many at once. */
  revocations: number;
  revocationBatch: number;
  /** Authenticated requests before the last memory sample (capped by the time budget). */
  memoryRequests: number;
  /** The run ends (memory phase cut short) so that everything is stopped by this many seconds. */
  budgetSeconds: number;
  /** Where results go: `<out>/<timestamp>.json` (default bench/output/, ignored by git). */
  outDir: string;
}

const FULL: Omit<BenchOptions, 'outDir'> = {
  quick: false,
  // Four alternating rounds of 4 s per target: identical back-to-back runs differ by ±10% here,
  // so more, shorter rounds give a steadier ratio than two long ones. Two groups of rows (the
  // engine's three targets, the fast upstream's four) share the budget: 4 s rather than 5 s.
  seconds: 4,
  // Per target; the engine is shared, so it warms for all three (9 s): with 2 s each, the
  // warm-ups ran at half the steady rate and the first round was still warming.
  warmupSeconds: 3,
  rounds: 4,
  latencyRounds: 4,
  latencySeconds: 4,
  // One wrk thread: on 2 cores a second event loop only takes CPU from nginx and Node (wrk
  // uses about 0.2 cores at 5,000 req/s). 32 keep-alive connections: the fewest that saturate
  // the engine through the gateway too (measured: with 16 the gateway's longer path left the
  // engine at 0.87 cores and 0.4 cores idle, so the ratio measured latency, not capacity).
  wrkThreads: 1,
  wrkConnections: 32,
  freshKeys: 1000,
  creates: 200,
  listClients: 10_000,
  listRuns: 5,
  listAllClients: 100_000,
  listAllProbes: 200,
  distinctKeys: 10_000,
  distinctKeysLarge: 100_000,
  balancerFloodShare: 0.5,
  balancerRounds: 8,
  revocations: 100,
  // One delete at a time: four pollers, each asking back to back (revocation.ts).
  revocationBatch: 1,
  memoryRequests: 1_000_000,
  // About 225 s of wrk runs (engine rows 89 s, fast rows 133 s with issue 23's flooded
  // target), 50 to 100 s of start-up and Node-client phases (more on a busy machine; the
  // list-all phase's fill, creates and probes about 10 s), the memory phase in what is left
  // (30 to 40 s, as before issue 23). Issue 22's rate-limit rows add about 30 s and the
  // revocation phase, one delete at a time, about 25 s. `npm run bench` builds first (15 to
  // 30 s): the whole command takes about 7.5 minutes. Issue 38's rows add about 140 s (the
  // distinct keys: two sizes, two targets, warm-ups and 4 rounds of 4 s, about 80 s with the
  // inserts; the balancer's two floods about 45 s; 1000 bearer tokens issued and presented,
  // about 10 s): about 10 minutes. The balancer row's 8 rounds (2026-11-29) add about 40 s.
  // Issue 51's fleet rows about 200 s (3 pairs started twice, the cost's rounds, 2 × 70 s of
  // hammering), issue 52's tracing row about 45 s: about 14.5 minutes.
  budgetSeconds: 850,
};

const QUICK: Omit<BenchOptions, 'outDir'> = {
  ...FULL,
  quick: true,
  seconds: 2,
  warmupSeconds: 1,
  rounds: 1,
  latencyRounds: 1,
  latencySeconds: 2,
  freshKeys: 100,
  creates: 20,
  listRuns: 2,
  // The same table as a full run (the fill takes a few seconds): the figure keeps its meaning.
  listAllProbes: 50,
  // The rows' shape (a smaller set inside a larger one), not their size.
  distinctKeys: 1_000,
  distinctKeysLarge: 10_000,
  balancerRounds: 1,
  revocations: 10,
  memoryRequests: 20_000,
  // 190 s before the HTTP/2 row (issue 49), which takes about 10 s of a quick run; the fleet
  // rows (issue 51) about 30 s, the tracing row (issue 52) about 8 s.
  budgetSeconds: 240,
};

const NUMERIC: Record<string, keyof BenchOptions> = {
  '--seconds': 'seconds',
  '--warmup': 'warmupSeconds',
  '--rounds': 'rounds',
  '--latency-rounds': 'latencyRounds',
  '--latency-seconds': 'latencySeconds',
  '--threads': 'wrkThreads',
  '--connections': 'wrkConnections',
  '--fresh-keys': 'freshKeys',
  '--creates': 'creates',
  '--list-clients': 'listClients',
  '--list-all-clients': 'listAllClients',
  '--list-all-probes': 'listAllProbes',
  '--distinct-keys': 'distinctKeys',
  '--distinct-keys-large': 'distinctKeysLarge',
  '--balancer-flood-share': 'balancerFloodShare',
  '--balancer-rounds': 'balancerRounds',
  '--revocations': 'revocations',
  '--revocation-batch': 'revocationBatch',
  '--memory-requests': 'memoryRequests',
  '--budget': 'budgetSeconds',
};

export const USAGE = `npm run bench -- [--quick] [--out DIR] ${Object.keys(NUMERIC)
  .map((f) => `[${f} N]`)
  .join(' ')}`;

/** Parses argv (after `node main.js`); `--quick` first sets the defaults the others refine. */
export function parseOptions(argv: string[], packageRoot: string): BenchOptions {
  const options: BenchOptions = {
    ...(argv.includes('--quick') ? QUICK : FULL),
    outDir: join(packageRoot, 'bench', 'output'),
  };
  for (let i = 0; i < argv.length; i += 1) {
    const flag = argv[i]!;
    if (flag === '--quick') continue;
    if (flag === '--help' || flag === '-h') throw new UsageError(USAGE);
    const value = argv[i + 1];
    if (value === undefined) throw new UsageError(`${flag} needs a value\n${USAGE}`);
    i += 1;
    if (flag === '--out') {
      options.outDir = value;
      continue;
    }
    const key = NUMERIC[flag];
    const n = Number(value);
    if (!key) throw new UsageError(`unknown option ${flag}\n${USAGE}`);
    if (!Number.isFinite(n) || n <= 0) throw new UsageError(`${flag} must be a positive number`);
    (options as unknown as Record<string, number>)[key] = n;
  }
  return options;
}

export class UsageError extends Error {}
