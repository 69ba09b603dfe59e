import pg from 'pg';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { freshDatabase } from '../support/database.js';
import { CLIENTS } from '../support/management.js';
import { startNativeStack } from '../support/native-stack.js';
import {
  createLimitedClient,
  manageStack,
  startOfWindow,
} from '../support/rate-limited-clients.js';
import { apk } from '../support/sidecar.js';
import type { Stack } from '../support/stack.js';
import { callStack } from '../support/stack-http.js';

// Per-client rate limits and usage (docs/decisions/20261125-rate-limits-and-usage.md) through
// real nginx, sidecars and PostgreSQL: three gateway pairs on one database. A limit is counted
// by each pair on its own; usage is counted by every nginx and lands in one table.

type NativeStack = Stack & { home: string };
let a: NativeStack;
let b: NativeStack;
let c: NativeStack;
let db: pg.Client;

// Counts reach PostgreSQL within seconds instead of the default 10 s.
const env = (url: string) => ({ DATABASE_URL: url, USAGE_FLUSH_MS: '500' });

beforeAll(async () => {
  const databaseUrl = await freshDatabase();
  a = await startNativeStack({ env: env(databaseUrl) });
  b = await startNativeStack({ env: env(databaseUrl) });
  c = await startNativeStack({ env: env(databaseUrl) });
  db = new pg.Client({ connectionString: databaseUrl });
  await db.connect();
}, 300_000);
afterAll(async () => {
  await db?.end();
  await Promise.all([a?.close(), b?.close(), c?.close()]);
});

const call = (stack: Stack, key: string) => callStack(stack, '/api', { headers: apk(key) });

const statuses = (answers: { status: number }[]) => answers.map((r) => r.status);

async function sequence(stack: Stack, key: string, n: number) {
  const answers = [];
  for (let i = 0; i < n; i += 1) answers.push(await call(stack, key));
  return answers;
}

describe('a client limited to 5 requests per second', () => {
  test('gets exactly 5 × 200, then 429 RATE_LIMITED with Retry-After, and the draft headers on every answer', async () => {
    const { token } = await createLimitedClient(a, 'rl', { requests: 5, per_seconds: 1 });
    await startOfWindow(1, 300);
    await call(a, token); // learnt by nginx (a miss asks the sidecar); counts as the first
    // The other 11 at once, so that all of them land in the same one-second window even on a
    // busy machine (sent one after another they may take longer than the window).
    const answers = [await call(a, token)];
    const rest = await Promise.all(Array.from({ length: 10 }, () => call(a, token)));
    answers.push(...rest);
    const counts = { 200: 0, 429: 0 };
    for (const res of answers) counts[res.status as 200 | 429] += 1;
    // The first request above was the first 200.
    expect(counts).toEqual({ 200: 4, 429: 7 });
    const remaining: number[] = [];
    for (const res of answers) {
      expect(res.headers['ratelimit-policy']).toBe('"client";q=5;w=1');
      const match = /^"client";r=(\d+);t=([1-9][0-9]*)$/.exec(String(res.headers.ratelimit));
      expect(match, String(res.headers.ratelimit)).not.toBeNull();
      if (res.status === 200) remaining.push(Number(match![1]));
      else expect(match![1]).toBe('0');
    }
    // Each allowed answer says how many are left (3, 2, 1, 0 after the first's 4, within a
    // window; a burst across a window's edge weighs the previous one and may say less).
    expect(remaining).toHaveLength(4);
    for (const r of remaining) expect(r).toBeLessThanOrEqual(3);
    expect(remaining).toContain(0);
    const refused = answers.find((r) => r.status === 429)!;
    expect(refused.headers['content-type']).toBe('application/json');
    expect(refused.json).toEqual({
      errors: [
        {
          code: 'RATE_LIMITED',
          message: "The API client's rate limit is reached; retry after the time in Retry-After.",
        },
      ],
    });
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(Number(refused.headers['retry-after'])).toBeLessThanOrEqual(2);
    expect(refused.headers['x-request-id']).toMatch(/^[0-9a-f]{32}$/);
  }, 60_000);

  test('a PUT changing the limit applies on the next request; null removes it', async () => {
    const { id, token } = await createLimitedClient(a, 'rl', { requests: 2, per_seconds: 60 });
    await startOfWindow(60, 50_000);
    expect(statuses(await sequence(a, token, 3))).toEqual([200, 200, 429]);

    expect(
      (
        await manageStack(a, 'PUT', `${CLIENTS}/${id}`, {
          rate_limit: { requests: 4, per_seconds: 60 },
        })
      ).status,
    ).toBe(200);
    // The same window, now allowing 4: two more, then refused.
    const raised = await sequence(a, token, 3);
    expect(statuses(raised)).toEqual([200, 200, 429]);
    expect(raised[0]!.headers['ratelimit-policy']).toBe('"client";q=4;w=60');

    expect((await manageStack(a, 'PUT', `${CLIENTS}/${id}`, { rate_limit: null })).status).toBe(
      200,
    );
    const free = await sequence(a, token, 10);
    expect(statuses(free)).toEqual(Array(10).fill(200));
    for (const res of free) {
      expect(res.headers).not.toHaveProperty('ratelimit');
      expect(res.headers).not.toHaveProperty('ratelimit-policy');
    }
    // Another pair hears of the change through PostgreSQL (LISTEN), within moments.
    expect(
      (
        await manageStack(a, 'PUT', `${CLIENTS}/${id}`, {
          rate_limit: { requests: 1, per_seconds: 3600 },
        })
      ).status,
    ).toBe(200);
    let seen = '';
    for (let tries = 0; tries < 50 && seen !== '"client";q=1;w=3600'; tries += 1) {
      seen = String((await call(b, token)).headers['ratelimit-policy'] ?? '');
      if (seen !== '"client";q=1;w=3600') await new Promise((r) => setTimeout(r, 20));
    }
    expect(seen).toBe('"client";q=1;w=3600');
    expect((await call(b, token)).status).toBe(429);
  }, 120_000);

  test('a client without a limit is never limited and carries no rate-limit headers', async () => {
    const { id, token } = await createLimitedClient(a, 'rl', null);
    const answers = await Promise.all(Array.from({ length: 200 }, () => call(a, token)));
    expect(new Set(statuses(answers))).toEqual(new Set([200]));
    for (const res of answers) expect(res.headers).not.toHaveProperty('ratelimit');
    const usage = await waitForUsage(id, (t) => t.allowed >= 200);
    expect(usage).toEqual({ allowed: 200, limited: 0, failed: 0 });
  }, 90_000);
});

describe('three gateway pairs', () => {
  test('each pair counts the limit on its own: 3 per window on a pair is 9 across three', async () => {
    const { token } = await createLimitedClient(a, 'rl', { requests: 3, per_seconds: 30 });
    await startOfWindow(30, 20_000);
    const perPair = [];
    for (const stack of [a, b, c]) perPair.push(statuses(await sequence(stack, token, 5)));
    expect(perPair).toEqual(Array(3).fill([200, 200, 200, 429, 429]));
  }, 90_000);
});

interface Totals {
  allowed: number;
  limited: number;
  failed: number;
}

/** The client's usage summed over the last hour, through the API, once `done` holds (or 30 s). */
async function waitForUsage(id: number, done: (t: Totals) => boolean, stack: Stack = a) {
  const since = new Date(Date.now() - 3_600_000).toISOString();
  let totals: Totals = { allowed: 0, limited: 0, failed: 0 };
  for (let tries = 0; tries < 150; tries += 1) {
    const res = await manageStack(
      stack,
      'GET',
      `${CLIENTS}/${id}/usage?step=minute&since=${encodeURIComponent(since)}`,
    );
    expect(res.status, res.text).toBe(200);
    const points = (res.json as { points: Totals[] }).points;
    totals = points.reduce(
      (sum, p) => ({
        allowed: sum.allowed + p.allowed,
        limited: sum.limited + p.limited,
        failed: sum.failed + p.failed,
      }),
      { allowed: 0, limited: 0, failed: 0 },
    );
    if (done(totals)) return totals;
    await new Promise((r) => setTimeout(r, 200));
  }
  return totals;
}

describe('usage', () => {
  test('rows appear after traffic on every pair and add up to what was sent, across a restart', async () => {
    const limited = await createLimitedClient(a, 'rl', { requests: 2, per_seconds: 3600 });
    const open = await createLimitedClient(a, 'rl', null);
    await sequence(a, limited.token, 6); // 2 allowed, 4 limited
    await Promise.all([sequence(a, open.token, 20), sequence(b, open.token, 15)]);
    // Two failed authentications naming the open client (a wrong secret).
    for (let i = 0; i < 2; i += 1) {
      expect((await call(c, `${open.id}.${'x'.repeat(43)}`)).status).toBe(401);
    }
    expect(await waitForUsage(limited.id, (t) => t.allowed + t.limited >= 6)).toEqual({
      allowed: 2,
      limited: 4,
      failed: 0,
    });
    expect(await waitForUsage(open.id, (t) => t.allowed >= 35 && t.failed >= 2)).toEqual({
      allowed: 35,
      limited: 0,
      failed: 2,
    });
    const { rows } = await db.query<{ n: string }>(
      'SELECT sum(allowed)::text AS n FROM api_client_usage WHERE api_key_id = $1',
      [open.id],
    );
    expect(rows[0]!.n).toBe('35');

    await a.restart();
    await sequence(a, open.token, 10);
    expect(await waitForUsage(open.id, (t) => t.allowed >= 45)).toEqual({
      allowed: 45,
      limited: 0,
      failed: 2,
    });
  }, 180_000);
});
