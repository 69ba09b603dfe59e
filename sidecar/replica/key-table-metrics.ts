import { Counter } from 'prom-client';
import { type SidecarMetrics, scrapedGauge } from '../metrics/sidecar-metrics.js';
import type { ReplicaStatus } from './replica-state.js';

const PHASES = ['off', 'unknown', 'loading', 'complete'] as const;

/**
 * The key table's replica in this pair's nginx (docs/decisions/20261127-key-table-replica.md),
 * as the replicator last saw it: its phase, size, memory, position, lag, load time, and
 * whether it is full (a full replica asks about the clients it could not hold).
 */
export function registerKeyTableMetrics(
  metrics: SidecarMetrics,
  status: () => ReplicaStatus,
): void {
  const r = metrics.registry;
  const one = (name: string, help: string, read: (s: ReplicaStatus) => number | null) =>
    scrapedGauge(r, name, help, [], () => {
      const value = read(status());
      return value === null ? [] : [{ labels: {}, value }];
    });
  scrapedGauge(
    r,
    'gateway_key_table_phase',
    "The replica's phase: 1 for the current one.",
    ['phase'],
    () => {
      const { phase } = status();
      return PHASES.map((p) => ({ labels: { phase: p }, value: p === phase ? 1 : 0 }));
    },
  );
  one(
    'gateway_key_table_complete',
    '1 while nginx holds the whole key table and follows the feed.',
    (s) => (s.phase === 'complete' ? 1 : 0),
  );
  one('gateway_key_table_records', 'Key records nginx holds.', (s) => s.nginx?.records ?? null);
  one(
    'gateway_key_table_full',
    '1 once a record found no room in the key table (raise key_table.size).',
    (s) => (s.nginx ? (s.nginx.full ? 1 : 0) : null),
  );
  one(
    'gateway_key_table_capacity_bytes',
    "The key table's shared memory.",
    (s) => s.nginx?.capacityBytes ?? null,
  );
  one(
    'gateway_key_table_free_bytes',
    "The key table's free shared memory.",
    (s) => s.nginx?.freeBytes ?? null,
  );
  one(
    'gateway_key_table_position',
    'The change feed position the replica reflects.',
    (s) => s.position?.position ?? null,
  );
  one(
    'gateway_key_table_lag_positions',
    'Changes in the feed not yet in the replica at the last heartbeat.',
    (s) => (s.phase === 'complete' ? s.lagPositions : null),
  );
  let missedCounted = 0;
  new Counter({
    name: 'gateway_key_table_missed_changes_total',
    help: "Clients whose change reached this pair's nginx by a heartbeat's check of the feed, not by its notice (notices lost on a connection that stayed up).",
    registers: [r],
    collect() {
      const missed = status().missedChanges;
      if (missed > missedCounted) this.inc(missed - missedCounted);
      missedCounted = missed;
    },
  });
  one(
    'gateway_key_table_subjects',
    "Clients with a subject whose rows this sidecar holds beside nginx's replica (bearer tokens' look-ups).",
    (s) => (s.phase === 'off' ? null : s.subjects),
  );
  one('gateway_key_table_load_seconds', 'How long the last full load took.', (s) => s.loadSeconds);
  one(
    'gateway_key_table_trusted_seconds',
    'Seconds nginx will go on deciding from its replica without news from this sidecar.',
    (s) => (s.nginx?.trustedUntil ? Math.max(0, s.nginx.trustedUntil - Date.now() / 1000) : null),
  );
}
