import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
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
// limit holds across the fleet within the stated bound; Redis away, on_failure local then
// closed.

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
/** gateway_rate_limit_over_admitted_total on `stack`'s sidecar. */
const overAdmitted = async (stack: NativeStack) =>
  Number(/^gateway_rate_limit_over_admitted_total (\d+)$/m.exec(await metricsOf(stack))?.[1]);
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
    // Reached but never passed: no over-admission seen, in /metrics and in readiness.
    await settle();
    for (const stack of pairs) {
      expect(await overAdmitted(stack)).toBe(0);
      const ready = await fetch(`${stack.gateway().metricsUrl}/readyz`);
      expect(await ready.json()).toEqual({
        status: 'ready',
        rate_limit_store: { up: true, sync_lag_seconds: expect.any(Number), over_admitted: 0 },
      });
    }
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
    const before = await Promise.all(pairs.map(overAdmitted));
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
    // Every pair sees the fleet's window: what it admitted over the limit, counted once.
    const over = allowed - limit;
    for (const [i, stack] of pairs.entries()) {
      const seen = async () => (await overAdmitted(stack)) - before[i]!;
      await until(`pair ${i} sees ${over} over`, async () => (await seen()) === over, 10_000).catch(
        () => {},
      );
      expect(await seen()).toBe(over);
      const ready = (await (await fetch(`${stack.gateway().metricsUrl}/readyz`)).json()) as {
        rate_limit_store: { over_admitted: number };
      };
      expect(ready.rate_limit_store.over_admitted).toBe(await overAdmitted(stack));
    }
  }, 120_000);

  test('Redis away: each pair enforces the limit alone, never a 500; back: the fleet total again', async () => {
    const before = await Promise.all(pairs.map(overAdmitted));
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
    // What the pairs admitted alone past the limit is seen once the fleet's total is back.
    for (const [i, stack] of pairs.entries()) {
      const seen = async () => (await overAdmitted(stack)) - before[i]!;
      await until(`pair ${i} sees 6 over`, async () => (await seen()) === 6, 10_000).catch(
        () => {},
      );
      expect(await seen()).toBe(6);
    }
    const fresh = await createLimitedClient(pairs[0]!, 'grl', { requests: 3, per_seconds: 60 });
    await settle();
    expect(statuses(await sequence(pairs[1]!, fresh.token, 3))).toEqual([200, 200, 200]);
  }, 180_000);
});

/** Until `check` holds, every 100 ms, at most `timeoutMs`. */
async function until(what: string, check: () => Promise<boolean>, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out: ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
const metricsOf = async (stack: NativeStack) =>
  (await fetch(`${stack.gateway().metricsUrl}/metrics`)).text();
const storeUp = async (stack: NativeStack) =>
  /^gateway_rate_limit_store_up 1$/m.test(await metricsOf(stack).catch(() => ''));

describe('RATE_LIMITS_ON_FAILURE=closed across three pairs', () => {
  // Issue 51's outage: 30 s of Redis away, every answer on every pair checked throughout.
  const OUTAGE_MS = 30_000;
  const PER = 300;
  const code = (res: { json?: unknown }) =>
    (res.json as { errors?: { code: string }[] } | undefined)?.errors?.[0]?.code;

  beforeAll(async () => {
    if (!(await storeUp(pairs[0]!))) await redis.start().catch(() => {});
    for (const stack of pairs) await stack.restart({ RATE_LIMITS_ON_FAILURE: 'closed' });
    for (const stack of pairs) await until('store up', () => storeUp(stack));
  }, 300_000);

  test('Redis away: no limited request passes on any pair (503, never a 500), others are untouched; back: the fleet total is right again', async () => {
    const limited = await createLimitedClient(pairs[0]!, 'grl', { requests: 5, per_seconds: PER });
    const free = await createLimitedClient(pairs[0]!, 'grl', null);
    await startOfWindow(PER, (PER - 60) * 1000);
    const [a, b] = pairs as [NativeStack, NativeStack, NativeStack];
    expect(statuses(await sequence(a, limited.token, 2))).toEqual([200, 200]);
    await settle();
    await redis.stop();
    await settle();
    // Every pair, for the outage: each limited request refused, each other one passed.
    const seen = { limited: [] as number[], free: [] as number[], codes: new Set<string>() };
    const retryAfter = new Set<string>();
    const started = Date.now();
    await Promise.all(
      pairs.map(async (stack) => {
        while (Date.now() - started < OUTAGE_MS) {
          const res = await call(stack, limited.token);
          seen.limited.push(res.status);
          seen.codes.add(String(code(res)));
          retryAfter.add(String(res.headers['retry-after']));
          seen.free.push((await call(stack, free.token)).status);
        }
      }),
    );
    console.log(
      `closed for ${OUTAGE_MS} ms: ${seen.limited.length} limited requests, ${seen.free.length} others`,
    );
    expect(seen.limited.length).toBeGreaterThanOrEqual(3);
    expect(new Set(seen.limited)).toEqual(new Set([503]));
    expect(seen.codes).toEqual(new Set(['RATE_LIMIT_STORE_UNREACHABLE']));
    // One sync interval (200 ms) in whole seconds.
    expect(retryAfter).toEqual(new Set(['1']));
    expect(new Set(seen.free)).toEqual(new Set([200]));
    for (const stack of pairs) {
      const ready = await fetch(`${stack.gateway().metricsUrl}/readyz`);
      expect(ready.status).toBe(200);
      expect(await ready.json()).toMatchObject({
        degraded: [
          {
            code: 'RATE_LIMIT_STORE_UNREACHABLE',
            message: expect.stringContaining('rate-limited clients are refused'),
          },
        ],
      });
      expect(await metricsOf(stack)).toMatch(/^gateway_rate_limit_store_up 0$/m);
    }
    // Back, empty: A's 2 are pushed again, nothing refused was counted; 3 left on the fleet.
    await redis.start();
    for (const stack of pairs) await until('store up', () => storeUp(stack));
    await settle();
    const store = new Redis(redis.url);
    const total = Number(
      await store.get(`gw:rl:${limited.id}:${PER}:${Math.floor(Date.now() / (PER * 1000))}`),
    );
    store.disconnect();
    expect(total).toBe(2);
    expect(statuses(await sequence(b, limited.token, 4))).toEqual([200, 200, 200, 429]);
  }, 180_000);

  test('a sidecar that dies while Redis is away leaves its nginx closed; started again, it stays closed until a sync works', async () => {
    const limited = await createLimitedClient(pairs[0]!, 'grl', { requests: 5, per_seconds: PER });
    const free = await createLimitedClient(pairs[0]!, 'grl', null);
    const c = pairs[2]!;
    await redis.stop();
    await until('store down', async () => !(await storeUp(c)));
    await settle();
    const onC = async (token: string) => {
      const res = await call(c, token);
      return `${res.status} ${code(res) ?? ''}`.trim();
    };
    expect(await onC(limited.token)).toBe('503 RATE_LIMIT_STORE_UNREACHABLE');
    expect(await onC(free.token)).toBe('200');
    const down = join(c.home, 'run', 'sidecar.down');
    await writeFile(down, ''); // held down
    const pid = await c.gateway().pid('sidecar');
    process.kill(pid!, 'SIGKILL');
    await until('sidecar held down', async () => c.gateway().output().includes('sidecar stopped'));
    expect(await onC(limited.token)).toBe('503 RATE_LIMIT_STORE_UNREACHABLE');
    expect(await onC(free.token)).toBe('200');
    await rm(down);
    await until(
      'sidecar back',
      async () => {
        const now = await c.gateway().pid('sidecar');
        return (
          now !== undefined &&
          now !== pid &&
          (await fetch(`${c.gateway().metricsUrl}/readyz`).then(
            (r) => r.status === 200,
            () => false,
          ))
        );
      },
      60_000,
    );
    await settle();
    expect(await onC(limited.token)).toBe('503 RATE_LIMIT_STORE_UNREACHABLE');
    await redis.start();
    await until('store up', () => storeUp(c));
    await settle();
    expect(await onC(limited.token)).toBe('200');
  }, 180_000);
});
