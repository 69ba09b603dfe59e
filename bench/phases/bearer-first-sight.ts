import { mkdtemp } from 'node:fs/promises';
import { join } from 'node:path';
import { Client, inParallel } from '../load/client.js';
import { BENCH_PATH } from '../stack/engine-session.js';
import { BEARER_CLIENT } from '../stack/oidc.js';
import { percentile } from '../stats.js';
import type { PhaseContext } from './context.js';
import { openChain } from './idle-chain.js';

export interface BearerFirstSightResult {
  tokens: number;
  /** Tokens presented first, untimed, so the sidecar's bearer path is compiled (its JIT). */
  warmupTokens: number;
  /** Latency of each new token's first (and only) request, ms (client side, keep-alive). */
  fresh: { p50: number; p99: number; max: number };
  /** The seen API key on the same connection, interleaved, as in the first-request rows. */
  seen: { p50: number; p99: number };
  /**
   * The idle chain (4 relays: a first sight's wake-ups), one round trip before each token,
   * interleaved: the reference measured under the same conditions as the tokens.
   */
  chain: { p50: number; p99: number; max: number };
  /** Answers other than 200: any makes the row invalid. */
  failures: number;
}

/**
 * Issue 38: a bearer token's first sight on gateway B. `count` tokens are issued by the
 * provider beforehand (client credentials for the bench's token client, each a new JWT), then
 * each is presented once, one at a time on one keep-alive connection, every one followed by the
 * seen API key (the first-request rows' method): nginx has decided nothing about any of these
 * tokens, so each is verified by the sidecar (signature with cached keys, claims) and its
 * client's record looked up. Reported against the idle chain's p99 (a first sight's wake-ups
 * through processes that do nothing), measured interleaved: one round trip through the 4 idle
 * relays before each token, so the two p99s come from the same seconds of this machine (on the
 * 2-core VM a p99 taken a minute apart moved by a factor of two: 2.7 and 3.6 ms for the same
 * chain on two runs of one day). First WARMUP_TOKENS other new
 * tokens go the same way untimed: the row is a running gateway's cost for a token it has not
 * seen, not V8 compiling the sidecar's bearer path in a process that has verified none yet
 * (which the first few hundred pay: p99 twice as high in this phase's first round).
 */
/** Untimed first sights before the timed ones (see measureBearerFirstSight). */
export const WARMUP_TOKENS = 300;

export async function measureBearerFirstSight(
  ctx: PhaseContext,
  count: number,
): Promise<BearerFirstSightResult> {
  const { b, oidc, apiKey } = ctx.stack;
  const warmup = Math.min(WARMUP_TOKENS, count);
  // Issued before anything is timed: signing (RS256) runs in this process, as the provider does.
  const issued = await inParallel(Array.from({ length: warmup + count }), 4, () =>
    oidc.provider.issueToken(BEARER_CLIENT),
  );
  const warmupTokens = issued.slice(0, warmup);
  const tokens = issued.slice(warmup);
  if (new Set(issued).size !== issued.length) throw new Error('the provider issued a token twice');
  const client = new Client(b.url, b.ca, 1);
  const fresh: number[] = [];
  const seen: number[] = [];
  const chainTimes: number[] = [];
  let failures = 0;
  // A folder of its own: the idle chain's relays left their sockets behind them in the stack's.
  const chain = await openChain(await mkdtemp(join(ctx.stack.dir, 'bearer-relays-')), 4);
  try {
    const ask = (authorization: string) =>
      client.send('GET', BENCH_PATH, { Authorization: authorization });
    await ask(`apk ${apiKey}`); // the connection's TLS handshake is not part of any figure
    for (const token of warmupTokens) {
      if ((await ask(`Bearer ${token}`)).status !== 200) failures += 1;
    }
    for (const token of tokens) {
      chainTimes.push(await chain.roundTrip());
      const first = await ask(`Bearer ${token}`);
      if (first.status !== 200) failures += 1;
      fresh.push(first.ms);
      const again = await ask(`apk ${apiKey}`);
      if (again.status !== 200) failures += 1;
      seen.push(again.ms);
    }
  } finally {
    client.close();
    chain.close();
  }
  return {
    tokens: tokens.length,
    warmupTokens: warmup,
    fresh: { p50: percentile(fresh, 50), p99: percentile(fresh, 99), max: percentile(fresh, 100) },
    seen: { p50: percentile(seen, 50), p99: percentile(seen, 99) },
    chain: {
      p50: percentile(chainTimes, 50),
      p99: percentile(chainTimes, 99),
      max: percentile(chainTimes, 100),
    },
    failures,
  };
}
