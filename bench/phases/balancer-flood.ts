import { randomInt } from 'node:crypto';
import { type Balancer, startBalancer } from '../stack/balancer.js';
import { BENCH_PATH } from '../stack/engine-session.js';
import {
  controlSocketOf,
  counterGrowth,
  flushedCounters,
  type LuaCounters,
} from '../stack/nginx-control.js';
import { FIXED_RATE_FLOOD, MAX_RATE } from '../wrk/lua.js';
import { type Aggregate, aggregate } from './aggregate.js';
import { apkTarget, type MeasuredRun, measure, type PhaseContext, type Target } from './context.js';
import { type FloodSummary, floodLine, summariseFlood } from './flood.js';

/** The two floods: random key ids with random secrets, and no credential at all. */
export type FloodMode = 'random-id' | 'none';

export interface BalancerFloodResult {
  /** The valid traffic's maximum rate through the balancer alone (its warm-up), req/s. */
  aloneRps: number;
  /** The rate each flood offered (the same for both), req/s. */
  floodRate: number;
  /** The valid traffic beside each flood, and each flood's own answers. */
  randomId: Aggregate;
  none: Aggregate;
  randomIdFlood: FloodSummary;
  noneFlood: FloodSummary;
  ratio: number;
  /**
   * What B's Lua counters grew by over the rounds (cache_miss: the random ids nginx asked its
   * sidecar about; the valid key and the credential-less requests never ask); null: not read.
   */
  counters: LuaCounters | null;
}

/**
 * Issue 38: behind a balancer, the attacker's flood of random key ids (each with a random
 * secret) against a flood of the same rate with no credential at all, which any gateway
 * refuses at once. HAProxy (bench/stack/balancer.ts) in front of gateway B; the valid traffic
 * is the API-key row's (one seen key, wrk at its maximum rate through the balancer); each flood
 * is a second wrk (-t1 -c64) through the same balancer at a fixed rate, options.balancerFloodShare
 * of the valid traffic's own rate alone. Rounds (options.balancerRounds) alternate the two floods; the figure is the
 * valid traffic's rate beside the random-id flood ÷ beside the credential-less one. The
 * gateways' failure budget per address is 0 (bench/stack/oidc.ts), as behind a balancer.
 */
export async function measureBalancerFlood(ctx: PhaseContext): Promise<BalancerFloodResult> {
  const { b, apiKey } = ctx.stack;
  let balancer: Balancer | undefined;
  try {
    balancer = await startBalancer(ctx.stack.dir, [b], ctx.say);
    ctx.extraRoots.haproxy = balancer.pid;
    const url = `${balancer.url}${BENCH_PATH}`;
    const common = { Host: 'localhost' };
    const valid = apkTarget('via balancer', balancer.url, apiKey);
    const alone = await measure(ctx, valid, ctx.options.warmupSeconds, MAX_RATE);
    const floodRate = Math.max(100, Math.round(alone.rps * ctx.options.balancerFloodShare));
    // FIXED_RATE_FLOOD's schedule is per wrk thread; the flood runs one.
    const interval = (1000 / floodRate).toFixed(4);
    ctx.say(
      `  ${balancer.url} in front of B: valid traffic alone ${Math.round(alone.rps)} req/s; each flood at ${floodRate} req/s`,
    );
    const beside = (mode: FloodMode): Target => ({
      ...valid,
      name: mode === 'none' ? 'bal+no-cred' : 'bal+random-id',
      flood: {
        url,
        headers: common,
        clientId: '',
        script: { lua: FIXED_RATE_FLOOD, args: [interval, String(randomInt(2 ** 31)), mode] },
      },
    });
    const randomId = beside('random-id');
    const none = beside('none');
    for (const target of [randomId, none]) {
      const warm = await measure(ctx, target, ctx.options.warmupSeconds, MAX_RATE);
      ctx.say(`  warm-up ${target.name}: ${Math.round(warm.rps)} req/s${floodLine(warm)}`);
    }
    const runs = new Map<Target, MeasuredRun[]>([
      [randomId, []],
      [none, []],
    ]);
    const socket = controlSocketOf(b.home);
    const before = await flushedCounters(socket);
    for (let round = 0; round < ctx.options.balancerRounds; round += 1) {
      for (const target of round % 2 === 0 ? [randomId, none] : [none, randomId]) {
        // A fresh seed per run: no two runs present the same ids.
        target.flood!.script!.args[1] = String(randomInt(2 ** 31));
        const run = await measure(ctx, target, ctx.options.seconds, MAX_RATE);
        runs.get(target)!.push(run);
        ctx.say(
          `  round ${round + 1} ${target.name.padEnd(14)} ${Math.round(run.rps)} req/s, p99 ${run.p99.toFixed(2)} ms${floodLine(run)}`,
        );
      }
    }
    const counters = counterGrowth(before, await flushedCounters(socket));
    const of = (t: Target) => aggregate(t.name, runs.get(t)!);
    const flood = (t: Target) => summariseFlood(runs.get(t)!.map((r) => r.flood!));
    const r = of(randomId);
    const n = of(none);
    return {
      aloneRps: alone.rps,
      floodRate,
      randomId: r,
      none: n,
      randomIdFlood: flood(randomId),
      noneFlood: flood(none),
      ratio: r.rps / n.rps,
      counters,
    };
  } finally {
    delete ctx.extraRoots.haproxy;
    await balancer?.stop();
  }
}
