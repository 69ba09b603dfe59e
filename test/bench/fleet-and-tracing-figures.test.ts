import { describe, expect, test } from 'vitest';
import type { GlobalLimitsResult, Hammered } from '../../bench/phases/global-limits.js';
import type { TracingResult } from '../../bench/phases/tracing.js';
import { globalLimitFigures, tracingFigure } from '../../bench/report/figures.js';
import { aggregate } from './support/aggregate.js';

const hammered = (store: 'redis' | 'local', statuses: Record<string, number>): Hammered => ({
  store,
  seconds: 60,
  allowed: statuses['200'] ?? 0,
  refused: statuses['429'] ?? 0,
  statuses,
  cpu: null,
});

const fleet = (redis: Record<string, number>, local = { '200': 1800, '429': 9000 }) =>
  ({
    cost: { limited: aggregate(9700), unlimited: aggregate(10_000) },
    limit: { requests: 100, per_seconds: 10 },
    syncMs: 200,
    redis: hammered('redis', redis),
    local: hammered('local', local),
  }) satisfies GlobalLimitsResult;

describe("issue 51's fleet rows", () => {
  test('the admitted count is judged against the limit over the run, and local is shown beside it', () => {
    const [cost, accuracy] = globalLimitFigures(fleet({ '200': 624, '429': 90_000 }));
    expect(cost).toMatchObject({ id: 'fast_global_limit_cost', measured: 0.97, pass: true });
    // 60 s at 100 per 10 s: 600 allowed; 624 is 4 % over.
    expect(accuracy).toMatchObject({ id: 'global_limit_accuracy', measured: 4, pass: true });
    expect(accuracy!.note).toContain('1800 admitted');
    expect(accuracy!.note).toContain('3.00 × the limit');
    expect(globalLimitFigures(fleet({ '200': 640, '429': 90_000 }))[1]!.pass).toBe(false);
  });

  test('a 5xx while hammered is never a pass, however close the count', () => {
    const [, accuracy] = globalLimitFigures(fleet({ '200': 600, '429': 90_000, '500': 1 }));
    expect(accuracy!.pass).toBe(false);
    expect(accuracy!.note).toMatch(/^INVALID: answered 500 ×1/);
  });

  test('a failed phase gives both rows, unmeasured', () => {
    const rows = globalLimitFigures({ error: 'redis-server did not answer' });
    expect(rows.map((r) => [r.id, r.pass, Number.isNaN(r.measured)])).toEqual([
      ['fast_global_limit_cost', false, true],
      ['global_limit_accuracy', false, true],
    ]);
  });
});

describe("issue 52's tracing row", () => {
  const traced = (spans: number): TracingResult => ({
    on: aggregate(9000),
    off: aggregate(10_000),
    answered: 150_000,
    spans,
    udpDropped: 150_000 - spans,
  });

  test('tracing on ÷ off against 0.85, with every answered request exported as a span', () => {
    expect(tracingFigure(traced(150_000))).toMatchObject({ measured: 0.9, pass: true });
  });

  test('a request without its span makes the ratio no result, and the note says how many', () => {
    const row = tracingFigure(traced(149_000));
    expect(row.pass).toBe(false);
    expect(row.note).toMatch(/^SPANS LOST: 1000 requests without an exported span/);
  });
});
