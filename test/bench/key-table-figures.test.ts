import { describe, expect, test } from 'vitest';
import type { BalancerFloodResult } from '../../bench/phases/balancer-flood.js';
import type { FirstRequestResult } from '../../bench/phases/first-request.js';
import type { FloodSummary } from '../../bench/phases/flood.js';
import {
  balancerFloodFigure,
  bearerFirstSightFigure,
  createdFirstRequestFigure,
  distinctKeysFigures,
  powerOfTen,
} from '../../bench/report/figures.js';
import { aggregate } from './support/aggregate.js';

const cpu = { nginx: 0.5, other: 0.05, idle: 1 };

const created = (fresh: number, seen: number, counters: Record<string, number> | null) =>
  ({
    keys: 1000,
    fresh: { p50: 0.5, p99: fresh, max: fresh + 1 },
    seen: { p50: 0.45, p99: seen },
    failures: 0,
    createdBeforeMs: 2500,
    counters,
    created: [],
  }) satisfies FirstRequestResult;

const flood = (rps: number, statuses: Record<string, number>): FloodSummary => ({
  runs: 4,
  failed: [],
  requests: rps * 16,
  rps,
  refused401: statuses['401'] ?? 0,
  refused429: 0,
  other: 0,
  statuses,
  socketErrors: 0,
});

describe("issue 38's rows", () => {
  test("a created client is a hit when nginx asked no one and its p99 is a seen key's", () => {
    const hit = createdFirstRequestFigure(created(1.9, 1.6, { key_hit: 1000 }), cpu);
    expect(hit.id).toBe('fast_created_first_request_p99');
    expect(hit.pass).toBe(true);
    expect(hit.target).toContain('2.10');
    expect(hit.note).toContain('asked its sidecar 0 times for 1000 created keys');
    // A first sight: the sidecar was asked about each, whatever the latency.
    expect(createdFirstRequestFigure(created(1.9, 1.6, { cache_miss: 1000 }), cpu).pass).toBe(
      false,
    );
    expect(createdFirstRequestFigure(created(4.7, 1.6, {}), cpu).pass).toBe(false);
    // Without counters the latency alone decides, and the note says so.
    const blind = createdFirstRequestFigure(created(1.7, 1.6, null), cpu);
    expect(blind.pass).toBe(true);
    expect(blind.note).toContain('nginx counters not read');
  });

  test('the distinct-key rows name their sizes and pass at 0.90 of auth off', () => {
    const row = (keys: number, ratio: number) => ({
      keys,
      insertSeconds: 1,
      settleSeconds: 0.5,
      settled: true,
      keyTable: null,
      baseline: aggregate(20_000),
      gateway: aggregate(20_000 * ratio),
      ratio,
      counters: { cache_miss: 3 },
    });
    const [small, large] = distinctKeysFigures(
      { rows: [row(10_000, 0.93), row(100_000, 0.36)] },
      [10_000, 100_000],
    );
    expect(small!.figure).toContain('10^4 distinct keys');
    expect(small!.pass).toBe(true);
    expect(large!.id).toBe('fast_distinct_keys_large_throughput');
    expect(large!.figure).toContain('10^5 distinct keys');
    expect(large!.pass).toBe(false);
    expect(large!.note).toContain('B has no key table');
    const failed = distinctKeysFigures({ error: 'boom' }, [1000, 10_000]);
    expect(failed.map((f) => [f.id, f.note])).toEqual([
      ['fast_distinct_keys_throughput', 'NOT MEASURED: boom'],
      ['fast_distinct_keys_large_throughput', 'NOT MEASURED: boom'],
    ]);
    expect(powerOfTen(1_000_000)).toBe('10^6');
    expect(powerOfTen(25_000)).toBe('25000');
  });

  test('the balancer row compares the two floods and says when a flood did not hold its rate', () => {
    const result: BalancerFloodResult = {
      aloneRps: 12_000,
      floodRate: 6000,
      randomId: aggregate(7000),
      none: aggregate(7200),
      randomIdFlood: flood(5990, { '401': 95_840 }),
      noneFlood: flood(6001, { '401': 96_016 }),
      ratio: 7000 / 7200,
      counters: { refused_401: 191_856 },
    };
    const figure = balancerFloodFigure(result);
    expect(figure.pass).toBe(true);
    expect(figure.note).not.toContain('NOT HELD');
    expect(figure.note).toContain('asked its sidecar 0 times for 95840 random-id requests');
    const starved = balancerFloodFigure({
      ...result,
      randomId: aggregate(4000),
      ratio: 4000 / 7200,
      randomIdFlood: flood(3000, { '401': 48_000 }),
    });
    expect(starved.pass).toBe(false);
    expect(starved.note).toContain('FLOOD RATE NOT HELD (random-id)');
  });

  test("a bearer token's first sight is judged against 1.1 times the p99 of the idle chain interleaved with it", () => {
    const bearer = (p99: number) => ({
      tokens: 1000,
      warmupTokens: 300,
      fresh: { p50: 1.2, p99, max: p99 + 2 },
      seen: { p50: 0.4, p99: 1.5 },
      chain: { p50: 1, p99: 4, max: 9 },
      failures: 0,
    });
    const within = bearerFirstSightFigure(bearer(4.3), cpu);
    expect(within.measured).toBe(1.075);
    expect(within.pass).toBe(true);
    expect(within.note).toContain('one at a time, after 300 untimed others: p99 4.30 ms');
    expect(within.note).toContain("4 idle relays' p99 4.00 ms, one round trip before each token");
    expect(bearerFirstSightFigure(bearer(4.5), cpu).pass).toBe(false);
    expect(bearerFirstSightFigure({ ...bearer(4.3), failures: 1 }, cpu).pass).toBe(false);
    expect(bearerFirstSightFigure({ error: 'relay died' }, cpu).note).toBe(
      'NOT MEASURED: relay died',
    );
  });
});
