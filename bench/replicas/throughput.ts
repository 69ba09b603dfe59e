import type { ReplicasStack } from '../../test/support/replicas-stack.js';
import { PAIRS } from '../../test/support/replicas-stack.js';
import { MAX_RATE } from '../wrk/lua.js';
import { runWrk, type WrkResult } from '../wrk/run.js';

export interface ReplicasThroughput {
  /** Through the balancer, the three pairs in service. */
  balancerThreePairs: WrkResult;
  /** Through the balancer, pairs 2 and 3 in maintenance (HAProxy's runtime API). */
  balancerOnePair: WrkResult;
  /** Straight to pair 1's nginx, past the balancer: what the balancer's hop costs. */
  directOnePair: WrkResult;
  seconds: number;
  connections: number;
}

export interface ThroughputOptions {
  wrk: string;
  scriptDir: string;
  seconds: number;
  connections: number;
}

const setState = (stack: ReplicasStack, pair: string, state: 'ready' | 'maint') =>
  stack.compose([
    'exec',
    '-T',
    'balancer',
    'balancer-ctl',
    `set server pairs/${pair} state ${state}`,
  ]);

/**
 * wrk at full rate on `/api` with the admin key (a decision nginx holds: the hot path), each
 * run after a warm-up of a few seconds so every pair's nginx has the decision and its
 * connections to the app. wrk (2 threads) shares the 2 cores with everything it measures.
 */
export async function measureThroughput(
  stack: ReplicasStack,
  options: ThroughputOptions,
): Promise<ReplicasThroughput> {
  const headers = { Authorization: `apk ${stack.adminKey}`, Host: 'localhost' };
  const run = async (url: string) => {
    const base = { wrk: options.wrk, url, headers, threads: 2, connections: options.connections };
    await runWrk({ ...base, seconds: 3, script: MAX_RATE, scriptDir: options.scriptDir });
    return runWrk({
      ...base,
      seconds: options.seconds,
      script: MAX_RATE,
      scriptDir: options.scriptDir,
    });
  };
  const balancer = `https://127.0.0.1:${stack.port}/api`;
  const balancerThreePairs = await run(balancer);
  const others = PAIRS.slice(1);
  for (const pair of others) await setState(stack, pair, 'maint');
  let balancerOnePair: WrkResult;
  try {
    balancerOnePair = await run(balancer);
  } finally {
    for (const pair of others) await setState(stack, pair, 'ready');
  }
  const directOnePair = await run(`https://${stack.address('pair-1')}:443/api`);
  return {
    balancerThreePairs,
    balancerOnePair,
    directOnePair,
    seconds: options.seconds,
    connections: options.connections,
  };
}
