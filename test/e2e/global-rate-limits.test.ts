import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { freshDatabase } from '../support/database.js';
import { CLIENTS } from '../support/management.js';
import { startNativeStack } from '../support/native-stack.js';
import {
  createLimitedClient,
  manageStack,
  startOfWindow,
} from '../support/rate-limited-clients.js';
import { type RunningRedis, startRedis } from '../support/redis-server.js';
import { apk } from '../support/sidecar.js';
import type { Stack } from '../support/stack.js';
import { callStack } from '../support/stack-http.js';

// Global rate limits (docs/decisions/20261202-global-rate-limits.md): three native pairs on one
// PostgreSQL and one real Redis (Debian's redis-server), RATE_LIMITS_STORE=redis. A client's
// limit holds across the fleet within the stated bound.

type NativeStack = Awaited<ReturnType<typeof startNativeStack>>;
let redis: RunningRedis;
const pairs: NativeStack[] = [];

const SYNC_MS = 200;
// Two intervals: another pair's push, then this pair's pull (the bound's lag).
const settle = () => new Promise((r) => setTimeout(r, 3 * SYNC_MS + 100));

beforeAll(async () => {
  redis = await startRedis();
  const databaseUrl = await freshDatabase();
  const env = {
    DATABASE_URL: databaseUrl,
    RATE_LIMITS_STORE: 'redis',
    RATE_LIMITS_REDIS_URL: redis.url,
    RATE_LIMITS_SYNC_MS: String(SYNC_MS),
  };
  for (let i = 0; i < 3; i += 1) pairs.push(await startNativeStack({ env }));
}, 300_000);
afterAll(async () => {
  await Promise.all(pairs.map((p) => p.close()));
  await redis?.stop();
});

const call = (stack: Stack, key: string) => callStack(stack, '/api', { headers: apk(key) });

async function sequence(stack: Stack, key: string, n: number) {
  const answers = [];
  for (let i = 0; i < n; i += 1) answers.push(await call(stack, key));
  return answers;
}
const statuses = (answers: { status: number }[]) => answers.map((r) => r.status);
const count = (list: number[], status: number) => list.filter((s) => s === status).length;

describe('RATE_LIMITS_STORE=redis across three pairs', () => {
  test('a limit is the fleet’s: what one pair admitted is spent on the others, and RateLimit says so', async () => {
    const { token } = await createLimitedClient(pairs[0]!, 'grl', { requests: 9, per_seconds: 60 });
    await startOfWindow(60, 30_000);
    const [a, b, c] = pairs as [NativeStack, NativeStack, NativeStack];
    expect(statuses(await sequence(a, token, 4))).toEqual([200, 200, 200, 200]);
    await settle();
    const onB = await sequence(b, token, 7);
    expect(statuses(onB)).toEqual([200, 200, 200, 200, 200, 429, 429]);
    // The fleet's remaining, not B's own: 9 − 4 − 1 after B's first.
    expect(onB[0]!.headers.ratelimit).toMatch(/;r=4;/);
    await settle();
    const onC = await sequence(c, token, 2);
    expect(statuses(onC)).toEqual([429, 429]);
    expect(onC[0]!.json).toMatchObject({ errors: [{ code: 'RATE_LIMITED' }] });
  }, 120_000);

  test('a PUT lowering the limit applies fleet-wide within the sync interval', async () => {
    const { id, token } = await createLimitedClient(pairs[0]!, 'grl', {
      requests: 50,
      per_seconds: 60,
    });
    await startOfWindow(60, 30_000);
    const [a, b, c] = pairs as [NativeStack, NativeStack, NativeStack];
    expect(count(statuses(await sequence(a, token, 6)), 200)).toBe(6);
    const put = await manageStack(a, 'PUT', `${CLIENTS}/${id}`, {
      rate_limit: { requests: 5, per_seconds: 60 },
    });
    expect(put.status, put.text).toBe(200);
    await settle();
    for (const stack of [a, b, c]) expect(statuses(await sequence(stack, token, 1))).toEqual([429]);
  }, 120_000);

  test('one client hammered across the pairs is admitted within the bound', async () => {
    const limit = 60;
    const { token } = await createLimitedClient(pairs[0]!, 'grl', {
      requests: limit,
      per_seconds: 60,
    });
    await startOfWindow(60, 20_000);
    const started = Date.now();
    const results: number[] = [];
    // Four callers per pair, each sending one after the other, for 3 s.
    await Promise.all(
      pairs.flatMap((stack) =>
        Array.from({ length: 4 }, async () => {
          while (Date.now() - started < 3000) results.push((await call(stack, token)).status);
        }),
      ),
    );
    const seconds = (Date.now() - started) / 1000;
    const allowed = count(results, 200);
    // The bound: the fleet's admitting rate over two sync intervals (decision record).
    const rate = results.length / seconds;
    const bound = rate * 2 * (SYNC_MS / 1000);
    console.log(
      `hammered: ${results.length} sent in ${seconds.toFixed(1)} s, ${allowed} admitted, limit ${limit}, bound +${bound.toFixed(0)}`,
    );
    expect(count(results, 500)).toBe(0);
    expect(allowed).toBeGreaterThanOrEqual(limit);
    expect(allowed).toBeLessThanOrEqual(limit + Math.ceil(bound));
    expect(count(results, 200) + count(results, 429)).toBe(results.length);
  }, 120_000);

  test('Redis away: each pair enforces the limit alone, never a 500; back: the fleet total again', async () => {
    await redis.stop();
    await settle();
    const ready = await fetch(`${pairs[0]!.gateway().metricsUrl}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({
      degraded: [{ code: 'RATE_LIMIT_STORE_UNREACHABLE' }],
    });
    const metrics = await (await fetch(`${pairs[0]!.gateway().metricsUrl}/metrics`)).text();
    expect(metrics).toMatch(/^gateway_rate_limit_store_up 0$/m);
    expect(metrics).toMatch(/^gateway_rate_limit_store_transitions_total\{to="down"\} 1$/m);
    const { id, token } = await createLimitedClient(pairs[0]!, 'grl', {
      requests: 3,
      per_seconds: 60,
    });
    await startOfWindow(60, 30_000);
    const perPair = [];
    for (const stack of pairs) perPair.push(statuses(await sequence(stack, token, 4)));
    expect(perPair).toEqual(Array(3).fill([200, 200, 200, 429]));
    // Back, empty (a restart that lost its keys): each pair's counts are pushed again and the
    // fleet's total (9, over the limit) refuses on every pair; nobody is refused for a
    // window it did not use.
    await redis.start();
    await new Promise((r) => setTimeout(r, 3000));
    for (const stack of pairs) expect(statuses(await sequence(stack, token, 1))).toEqual([429]);
    const back = await (await fetch(`${pairs[0]!.gateway().metricsUrl}/metrics`)).text();
    expect(back).toMatch(/^gateway_rate_limit_store_up 1$/m);
    expect(back).toMatch(/^gateway_rate_limit_store_transitions_total\{to="up"\} 1$/m);
    const store = new Redis(redis.url);
    const window = Math.floor(Date.now() / 60_000);
    const total = Number(await store.get(`gw:rl:${id}:60:${window}`));
    store.disconnect();
    expect(total).toBe(9);
    const fresh = await createLimitedClient(pairs[0]!, 'grl', { requests: 3, per_seconds: 60 });
    await settle();
    expect(statuses(await sequence(pairs[1]!, fresh.token, 3))).toEqual([200, 200, 200]);
  }, 180_000);
});
