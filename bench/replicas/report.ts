import type { ReplicasRevocation } from './revocation.js';
import type { ReplicasRollingRestart } from './rolling-restart.js';
import type { ReplicasThroughput } from './throughput.js';

export interface ReplicasResult {
  throughput: ReplicasThroughput;
  revocation: ReplicasRevocation;
  rollingRestart: ReplicasRollingRestart;
}

const errorsOf = (e: Record<string, number>) => Object.values(e).reduce((a, b) => a + b, 0);

/** The figures as a table, each against issue 20's target where it has one. */
export function formatReplicas({
  throughput: t,
  revocation: r,
  rollingRestart: rr,
}: ReplicasResult): string {
  const direct = t.directOnePair.rps;
  const row = (name: string, w: ReplicasThroughput['directOnePair']) =>
    `  ${name.padEnd(34)} ${w.rps.toFixed(0).padStart(7)} req/s  p50 ${w.p50.toFixed(2)} ms  p99 ${w.p99.toFixed(2)} ms  errors ${errorsOf(w.errors)}`;
  const cost = (w: ReplicasThroughput['directOnePair']) =>
    `${(100 * (1 - w.rps / direct)).toFixed(0)} % fewer req/s, p50 +${(w.p50 - t.directOnePair.p50).toFixed(2)} ms`;
  return [
    `throughput (wrk, ${t.connections} connections, ${t.seconds} s, /api with a cached key):`,
    row('balancer, 3 pairs', t.balancerThreePairs),
    row('balancer, 1 pair (2 in maintenance)', t.balancerOnePair),
    row('straight to 1 pair', t.directOnePair),
    `  the balancer's cost (1 pair vs straight): ${cost(t.balancerOnePair)}`,
    `  3 pairs vs 1 through the balancer: ${((100 * t.balancerThreePairs.rps) / t.balancerOnePair.rps - 100).toFixed(0)} %`,
    `revocation (${r.deletes} deletes, one at a time; target worst <= 100 ms on 3 pairs):`,
    `  worst ${r.worstMs.toFixed(1)} ms, p50 ${r.p50Ms.toFixed(1)} ms, accepted after DELETE answered ${r.acceptedAfterDelete}, failures ${r.failures.length}`,
    ...Object.entries(r.byPair).map(
      ([pair, v]) => `  ${pair}: worst ${v.worstMs.toFixed(1)} ms, p50 ${v.p50Ms.toFixed(1)} ms`,
    ),
    `rolling restart (target 0 failed of >= 20,000): ${rr.failed} failed of ${rr.tally.requests}, restart ${rr.restartS.toFixed(0)} s, slowest ${rr.tally.slowestMs.toFixed(0)} ms`,
  ].join('\n');
}
