import { performance } from 'node:perf_hooks';
import { API_CLIENTS_PATH as CLIENTS } from '../../sidecar/clients/routes/operations.js';
import { PAIRS, type Pair, type ReplicasStack } from '../../test/support/replicas-stack.js';
import { type Answer, Client } from '../load/client.js';
import { percentile } from '../stats.js';

/** Consecutive refusals (sent after DELETE answered) that end a poller. */
const CONFIRM = 5;
/** Answers each poller needs before the DELETE: the key is in use on every pair. */
const WARM = 3;
/** A key still accepted this long after its DELETE counts at this value. */
const GIVE_UP_MS = 5_000;

export interface ReplicasRevocation {
  deletes: number;
  /** Per delete, the slowest pair: ms from DELETE's answer to the first refusal that stays. */
  worstMs: number;
  p50Ms: number;
  byPair: Record<Pair, { worstMs: number; p50Ms: number }>;
  /** Requests sent after DELETE answered and still let through (all pairs, all deletes). */
  acceptedAfterDelete: number;
  /** Unexpected answers (neither 200 nor 401), failed requests or deletes. */
  failures: string[];
}

/**
 * One delete at a time, `count` times: one poller per pair, straight to the pair's nginx (past
 * the balancer), asking again as soon as it has its answer (bench/phases/revocation.ts's way),
 * so the key's "yes" is in every nginx; then the DELETE goes to the pairs in turn (pair 1, 2,
 * 3, 1...), so each pair is measured both as the one that served it and as one told by
 * LISTEN/NOTIFY. Each pair's time is when the first request of its final run of refusals was
 * sent, minus DELETE's answer: an upper bound by one round trip.
 */
export async function measureRevocation(
  stack: ReplicasStack,
  count: number,
): Promise<ReplicasRevocation> {
  const clients = new Map(
    PAIRS.map((pair) => [pair, new Client(`https://${stack.address(pair)}:443`, stack.ca, 2)]),
  );
  const admin = `apk ${stack.adminKey}`;
  const times: number[] = [];
  const pairTimes = new Map<Pair, number[]>(PAIRS.map((p) => [p, []]));
  const failures: string[] = [];
  let acceptedAfterDelete = 0;
  try {
    for (let i = 0; i < count; i++) {
      const via = PAIRS[i % PAIRS.length]!;
      const created = await clients
        .get(via)!
        .send(
          'POST',
          CLIENTS,
          { Authorization: admin },
          { name: `bench-revoke-${i}`, is_admin: false, generate_api_key: true },
        );
      if (created.status !== 201)
        throw new Error(`create answered ${created.status}: ${created.text}`);
      const key = JSON.parse(created.text) as { api_key_id: number; token: string };
      const one = await revokeOne(clients, via, key, admin, failures);
      times.push(Math.max(...Object.values(one.ms)));
      for (const pair of PAIRS) pairTimes.get(pair)!.push(one.ms[pair]);
      acceptedAfterDelete += one.accepted;
    }
  } finally {
    for (const client of clients.values()) client.close();
  }
  return {
    deletes: times.length,
    worstMs: percentile(times, 100),
    p50Ms: percentile(times, 50),
    byPair: Object.fromEntries(
      [...pairTimes].map(([pair, ms]) => [
        pair,
        { worstMs: percentile(ms, 100), p50Ms: percentile(ms, 50) },
      ]),
    ) as ReplicasRevocation['byPair'],
    acceptedAfterDelete,
    failures,
  };
}

async function revokeOne(
  clients: Map<Pair, Client>,
  via: Pair,
  key: { api_key_id: number; token: string },
  admin: string,
  failures: string[],
): Promise<{ ms: Record<Pair, number>; accepted: number }> {
  let deletedAt: number | null = null;
  let giveUpAt = Number.POSITIVE_INFINITY;
  let warmed = 0;
  let allWarm: () => void = () => {};
  const warm = new Promise<void>((resolve) => {
    allWarm = resolve;
  });
  const polls = new Map<Pair, Array<{ sentAt: number; status: number }>>();
  const loops = PAIRS.map(async (pair) => {
    const seen: Array<{ sentAt: number; status: number }> = [];
    polls.set(pair, seen);
    let refusedInRow = 0;
    for (;;) {
      let answer: Answer;
      try {
        answer = await clients
          .get(pair)!
          .send('GET', '/api', { Authorization: `apk ${key.token}` });
      } catch (err) {
        failures.push(`${pair}: ${(err as Error).message}`);
        const now = performance.now();
        answer = { status: 0, text: '', sentAt: now, endAt: now, ms: 0 };
      }
      seen.push({ sentAt: answer.sentAt, status: answer.status });
      if (![200, 401, 0].includes(answer.status)) failures.push(`${pair}: status ${answer.status}`);
      if (deletedAt === null) {
        if (seen.length === WARM && ++warmed === PAIRS.length) allWarm();
      } else if (answer.sentAt >= deletedAt) {
        refusedInRow = answer.status === 401 ? refusedInRow + 1 : 0;
        if (refusedInRow >= CONFIRM || performance.now() > giveUpAt) return;
      }
    }
  });
  await warm;
  const del = await clients.get(via)!.send('DELETE', `${CLIENTS}/${key.api_key_id}`, {
    Authorization: admin,
  });
  if (del.status !== 200) failures.push(`DELETE answered ${del.status}`);
  deletedAt = del.endAt;
  giveUpAt = deletedAt + GIVE_UP_MS;
  await Promise.all(loops);
  const t0 = deletedAt;
  let accepted = 0;
  const ms = {} as Record<Pair, number>;
  for (const pair of PAIRS) {
    const after = polls.get(pair)!.filter((p) => p.sentAt >= t0);
    accepted += after.filter((p) => p.status === 200).length;
    let start = after.length;
    while (start > 0 && after[start - 1]!.status === 401) start -= 1;
    ms[pair] = (start < after.length ? after[start]!.sentAt : performance.now()) - t0;
  }
  return { ms, accepted };
}
