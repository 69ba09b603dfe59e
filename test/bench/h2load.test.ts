import { describe, expect, test } from 'vitest';
import { H2_REQUESTS_PER_CONNECTION, h2loadArgs, parseH2load } from '../../bench/h2load/run.js';
import { aggregateH2, H2_CONNECTIONS, H2_STREAMS, type H2Run } from '../../bench/phases/http2.js';
import { http2Figure } from '../../bench/report/figures.js';

// h2load 1.52's summary, as it printed it for 2 connections × 1000 requests against gateway B.
const SUMMARY = `starting benchmark...
spawning thread #0: 2 total client(s). 2000 total requests
Application protocol: h2
progress: 100% done

finished in 334.40ms, 5980.93 req/s, 1.73MB/s
requests: 2000 total, 2000 started, 2000 done, 2000 succeeded, 0 failed, 0 errored, 0 timeout
status codes: 2000 2xx, 0 3xx, 0 4xx, 0 5xx
traffic: 593.74KB (607985) total, 226.42KB (231853) headers (space savings 37.00%), 332.03KB (340000) data
                     min         max         mean         sd        +/- sd
time for request:      194us      5.92ms       591us       743us    94.05%
time for connect:     4.62ms      8.90ms      6.76ms      3.03ms   100.00%
`;

// The same client asked 1500 of each connection with no credential: nginx closed each after its
// 1000th answer (401s here), and h2load opened none in its place.
const PAST_THE_LIMIT = `finished in 1.20s, 1666.67 req/s, 1.00MB/s
requests: 3000 total, 2002 started, 2000 done, 0 succeeded, 3000 failed, 1000 errored, 0 timeout
status codes: 0 2xx, 0 3xx, 2000 4xx, 0 5xx
`;

describe("the HTTP/2 row's h2load (issue 49)", () => {
  test('each connection is asked exactly the requests nginx answers on one', () => {
    const args = h2loadArgs({
      url: 'https://127.0.0.1:4443/bench',
      headers: { Host: 'localhost', Authorization: 'apk 2.secret' },
      connections: H2_CONNECTIONS,
      streams: H2_STREAMS,
    });
    expect(H2_REQUESTS_PER_CONNECTION).toBe(1000);
    expect(args).toEqual([
      '-t1',
      '-c16',
      '-m8',
      `-n${16 * 1000}`,
      '-H',
      ':authority: localhost',
      '-H',
      'authorization: apk 2.secret',
      'https://127.0.0.1:4443/bench',
    ]);
  });

  test("h2load's summary is read: 2xx answers over its own wall time", () => {
    const r = parseH2load(SUMMARY);
    expect(r.requests).toBe(2000);
    expect(r.seconds).toBeCloseTo(0.3344, 6);
    expect(r.rps).toBeCloseTo(2000 / 0.3344, 3);
    expect(r.mean).toBeCloseTo(0.591, 6);
    expect(r.errors).toBe(0);
  });

  test('requests past the limit and refusals are errors, counted once each', () => {
    const r = parseH2load(PAST_THE_LIMIT);
    expect(r.requests).toBe(0);
    expect(r.errors).toBe(3000);
    expect(Number.isNaN(r.mean)).toBe(true);
    expect(() => parseH2load('connect failed')).toThrow(/no summary/);
  });

  const run = (target: string, requests: number, seconds: number, errors = 0): H2Run => ({
    target,
    requests,
    seconds,
    rps: requests / seconds,
    invocations: requests / 16_000,
    errors,
    mean: 1,
    cpu: { 'nginx B': 0.9, other: 0.05 },
  });

  test('the row: all requests over all seconds of each side, module hits in the note', () => {
    const baseline = aggregateH2('fast h2 baseline', [run('b', 64_000, 4), run('b', 48_000, 4)]);
    const apk = aggregateH2('fast h2 API key', [run('a', 64_000, 4.2), run('a', 48_000, 3.8)]);
    expect(baseline.rps).toBe(14_000);
    const row = http2Figure({ baseline, apk, moduleHits: 112_000 });
    expect(row.id).toBe('fast_h2_apk_throughput');
    expect(row.measured).toBe(1);
    expect(row.pass).toBe(true);
    expect(row.other).toBe(0.05);
    expect(row.note).toContain('112000 module hits counted for 112000 requests');
    expect(row.note).toContain('-c16 -m8');
  });

  test('below 0.95, or with any error, the row does not pass', () => {
    const baseline = aggregateH2('b', [run('b', 64_000, 4)]);
    expect(
      http2Figure({ baseline, apk: aggregateH2('a', [run('a', 48_000, 4)]), moduleHits: null })
        .pass,
    ).toBe(false);
    const failed = http2Figure({
      baseline,
      apk: aggregateH2('a', [run('a', 64_000, 4, 3)]),
      moduleHits: null,
    });
    expect(failed.pass).toBe(false);
    expect(failed.note).toMatch(/^INVALID: 3 errors/);
    expect(http2Figure({ error: 'h2load is not installed' }).note).toBe(
      'NOT MEASURED: h2load is not installed',
    );
  });
});
