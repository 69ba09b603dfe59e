import { Client } from '../load/client.js';
import { BENCH_PATH } from '../stack/engine-session.js';
import type { BenchGateway } from '../stack/gateway.js';
import {
  controlSocketOf,
  counterGrowth,
  flushedCounters,
  type LuaCounters,
} from '../stack/nginx-control.js';
import { percentile } from '../stats.js';
import type { PhaseContext } from './context.js';
import { type CreatedKey, createKeys } from './keys.js';

export interface FirstRequestResult {
  keys: number;
  /** Latency of the first request of each fresh key, ms (client side, keep-alive). */
  fresh: { p50: number; p99: number; max: number };
  /** The same client, interleaved: a key seen many times, for what the client itself costs. */
  seen: { p50: number; p99: number };
  /** Answers other than 200 (a fresh valid key must pass on its first request). */
  failures: number;
  /**
   * The shortest time between a key's creation (its 201) and its first request, ms: at least
   * CREATED_BEFORE_MS (issue 38: a client created at least 100 ms before).
   */
  createdBeforeMs: number;
  /**
   * What the gateway's Lua counters grew by over the fresh and seen requests (cache_miss: how
   * often nginx asked its sidecar); null when its control socket gave none.
   */
  counters: LuaCounters | null;
  created: CreatedKey[];
}

/** Issue 38: a created client's first request comes at least this long after its creation. */
export const CREATED_BEFORE_MS = 100;

/**
 * Keys created through the API (on gateway A) and never presented to any gateway before; each
 * is used for exactly one request, at least CREATED_BEFORE_MS after its creation. Without a
 * key table it misses the decision cache and nginx asks the sidecar (the first-sight path);
 * with one (issue 38) its record reached nginx through the change feed and the request is a
 * hit like any seen key's: the Lua counters' growth (cache_miss) says which. One keep-alive connection, one request at a time, on an otherwise idle
 * gateway: the latency of a first request, not of a queue. Every fresh request is followed by
 * one with an already-seen key on the same connection, so the two sets share conditions.
 * `headers`: what the gateway's app needs besides the credential (A's engine: its cookie).
 */
export async function measureFirstRequest(
  ctx: PhaseContext,
  gateway: BenchGateway,
  headers: Record<string, string>,
  prefix: string,
): Promise<FirstRequestResult> {
  const { apiKey } = ctx.stack;
  const created = await createKeys(ctx, ctx.options.freshKeys, prefix);
  const client = new Client(gateway.url, gateway.ca, 1);
  const socket = controlSocketOf(gateway.home);
  const fresh: number[] = [];
  const seen: number[] = [];
  let failures = 0;
  let createdBeforeMs = Number.POSITIVE_INFINITY;
  let counters: LuaCounters | null = null;
  try {
    const ask = (key: string) =>
      client.send('GET', BENCH_PATH, { ...headers, Authorization: `apk ${key}` });
    await ask(apiKey); // the connection's TLS handshake is not part of any figure
    const before = await flushedCounters(socket);
    for (const key of created) {
      // Keys are used in the order they were created, all after the last creation: only the
      // first few can be younger than CREATED_BEFORE_MS, and wait for it.
      const age = performance.now() - key.createdAt;
      if (age < CREATED_BEFORE_MS) await sleep(CREATED_BEFORE_MS - age);
      createdBeforeMs = Math.min(createdBeforeMs, performance.now() - key.createdAt);
      const first = await ask(key.token);
      if (first.status !== 200) failures += 1;
      fresh.push(first.ms);
      const again = await ask(apiKey);
      if (again.status !== 200) failures += 1;
      seen.push(again.ms);
    }
    counters = counterGrowth(before, await flushedCounters(socket));
  } finally {
    client.close();
  }
  if (gateway === ctx.stack.a) ctx.countA(fresh.length + seen.length + 1);
  return {
    keys: created.length,
    fresh: { p50: percentile(fresh, 50), p99: percentile(fresh, 99), max: percentile(fresh, 100) },
    seen: { p50: percentile(seen, 50), p99: percentile(seen, 99) },
    failures,
    createdBeforeMs,
    counters,
    created,
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
