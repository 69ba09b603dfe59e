import { performance } from 'node:perf_hooks';
import { NGINX_NAMES } from '../../common/contract.js';
import { type Answer, Client } from '../load/client.js';
import type { BenchGateway } from '../stack/gateway.js';
import { CLIENTS_PATH } from '../stack/setup.js';
import { percentile } from '../stats.js';
import type { PhaseContext } from './context.js';
import { type CreatedKey, createKeys } from './keys.js';
import { ACCEPTED, type Poll, pairRevocation, REFUSED } from './revocation-time.js';

/**
 * Pause between one poller's requests. None: each poller asks again as soon as it has its
 * answer, so the figure's resolution is one round trip (about a millisecond). With a 5 ms
 * pause and ten deletes at once (40 pollers in this one process) the figure was the pollers'
 * own timing: the first request after DELETE answered was already refused, tens of
 * milliseconds after it (issue 23).
 */
const POLL_MS = 0;
/** Consecutive refusals (sent after DELETE answered) that end a poller. */
const CONFIRM = 5;
/** Answers each poller needs before the DELETE: the key is seen and in use on both pairs. */
const WARM = 3;
/** A key still accepted this long after its DELETE counts as a failure at this value. */
const GIVE_UP_MS = 5_000;
/** Pollers per gateway and key, each on its own connection (nginx has 2 workers). */
const POLLERS = 2;
/**
 * What the pollers ask: a path under the gateway's reserved prefix, which nginx authenticates
 * like any other and then answers itself (404, the key still accepted; 401 once revoked), so a
 * poll's round trip is nginx's alone. Asked through the engine (gateway A's app), a poll in
 * flight when DELETE answered could take tens of milliseconds more on a loaded machine, and
 * the figure measured that: pair A, which invalidates before DELETE answers, showed the same
 * worst as pair B (34 ms, 2026-11-25).
 */
const PROBE_PATH = `${NGINX_NAMES.reservedPaths.find((p) => p.match === '^~')!.path}revocation-probe`;

export interface RevocationResult {
  deletes: number;
  /** Per delete, the worse of its two pairs: ms from DELETE's answer until refused for good. */
  worstMs: number;
  p50Ms: number;
  /** Requests sent after DELETE answered and still let through (all pairs, all deletes). */
  acceptedAfterDelete: number;
  /**
   * The same per pair: A's sidecar served the DELETE and invalidates its own nginx before it
   * answers; B's learns of it through LISTEN/NOTIFY and pushes it to its nginx.
   */
  byPair: Record<string, { worstMs: number; p50Ms: number; acceptedAfterDelete: number }>;
  /** Unexpected answers (neither the probe's 404 nor a refusal), or deletes that failed. */
  failures: number;
  /** What the failures were, by kind ("status 503 after DELETE", ...). */
  failureKinds: Record<string, number>;
  pollMs: number;
}

/**
 * Two proxy+sidecar pairs (gateways A and B) on one database. For each key: pollers on both
 * pairs use it continuously (its "yes" is in each nginx's decision cache, which alone would
 * keep it for `auth_cache.max_age_ms`), then gateway A's management API deletes it: what is
 * measured is the pushed invalidation, on A (before DELETE answers) and on B (LISTEN/NOTIFY).
 * From the moment DELETE's answer is received (t0), each poller keeps going
 * until CONFIRM refusals in a row; the time for a pair is when the first refused request after
 * its last accepted one was sent, minus t0 (`pairRevocation`): an upper bound, by at most
 * POLL_MS + one round trip. Deletes run `revocationBatch` at a time to fit the time budget.
 */
export async function measureRevocation(ctx: PhaseContext): Promise<RevocationResult> {
  const keys = await createKeys(ctx, ctx.options.revocations, 'bench-revoke');
  const admin = new Client(ctx.stack.a.url, ctx.stack.a.ca, ctx.options.revocationBatch);
  const times: number[] = [];
  const pairTimes = new Map<string, number[]>();
  const pairAccepted = new Map<string, number>();
  let acceptedAfterDelete = 0;
  let failures = 0;
  const failureKinds: Record<string, number> = {};
  try {
    for (let i = 0; i < keys.length; i += ctx.options.revocationBatch) {
      const batch = keys.slice(i, i + ctx.options.revocationBatch);
      const results = await Promise.all(batch.map((key) => revokeOne(ctx, admin, key)));
      for (const r of results) {
        times.push(r.ms);
        acceptedAfterDelete += r.accepted;
        for (const [pair, v] of Object.entries(r.byPair)) {
          pairTimes.set(pair, [...(pairTimes.get(pair) ?? []), v.ms]);
          pairAccepted.set(pair, (pairAccepted.get(pair) ?? 0) + v.accepted);
        }
        failures += r.failures.length;
        for (const kind of r.failures) failureKinds[kind] = (failureKinds[kind] ?? 0) + 1;
      }
    }
  } finally {
    admin.close();
  }
  return {
    deletes: times.length,
    worstMs: percentile(times, 100),
    p50Ms: percentile(times, 50),
    acceptedAfterDelete,
    byPair: Object.fromEntries(
      [...pairTimes].map(([pair, ms]) => [
        pair,
        {
          worstMs: percentile(ms, 100),
          p50Ms: percentile(ms, 50),
          acceptedAfterDelete: pairAccepted.get(pair) ?? 0,
        },
      ]),
    ),
    failures,
    failureKinds,
    pollMs: POLL_MS,
  };
}

async function revokeOne(ctx: PhaseContext, admin: Client, key: CreatedKey) {
  const { a, b } = ctx.stack;
  const pairs: [BenchGateway, Record<string, string>][] = [
    [a, {}],
    [b, {}],
  ];
  let deleteSentAt: number | null = null;
  let deletedAt: number | null = null;
  const deadline = { at: Number.POSITIVE_INFINITY };
  const pollers = pairs.flatMap(([gateway, headers]) => {
    const client = new Client(gateway.url, gateway.ca, POLLERS);
    return Array.from({ length: POLLERS }, () => ({
      client,
      gateway: gateway.name,
      polls: [] as Poll[],
      headers,
    }));
  });
  let warmed = 0;
  const failures: string[] = [];
  let warmedUp: () => void = () => {};
  const allWarm = new Promise<void>((resolve) => {
    warmedUp = resolve;
  });
  const loops = pollers.map(async (p) => {
    let refusedInRow = 0;
    for (;;) {
      let answer: Answer;
      try {
        answer = await p.client.send('GET', PROBE_PATH, {
          ...p.headers,
          Authorization: `apk ${key.token}`,
        });
      } catch (err) {
        failures.push(`${p.gateway}: ${(err as Error).message}`);
        const now = performance.now();
        answer = { status: 0, text: '', sentAt: now, endAt: now, ms: 0 };
      }
      p.polls.push({ sentAt: answer.sentAt, status: answer.status });
      if (answer.status !== ACCEPTED && !REFUSED.has(answer.status) && answer.status !== 0) {
        failures.push(`${p.gateway}: status ${answer.status}`);
      }
      if (deletedAt === null) {
        // Refused before its DELETE was sent: the key was not in use, so its revocation
        // proves nothing. (An answer during the DELETE's flight may rightly be a refusal.)
        const beforeDelete = deleteSentAt === null || answer.endAt < deleteSentAt;
        if (answer.status !== ACCEPTED && answer.status !== 0 && beforeDelete) {
          failures.push(`${p.gateway}: ${answer.status} before DELETE`);
        }
        if (p.polls.length === WARM) {
          warmed += 1;
          if (warmed === pollers.length) warmedUp();
        }
      } else if (answer.sentAt >= deletedAt) {
        refusedInRow = REFUSED.has(answer.status) ? refusedInRow + 1 : 0;
        if (refusedInRow >= CONFIRM || performance.now() > deadline.at) return;
      }
      await new Promise((r) => (POLL_MS > 0 ? setTimeout(r, POLL_MS) : setImmediate(r)));
    }
  });
  await allWarm;
  deleteSentAt = performance.now();
  try {
    const del = await admin.send('DELETE', `${CLIENTS_PATH}/${key.id}`, {
      Authorization: `apk ${a.adminKey}`,
    });
    if (del.status !== 200) failures.push(`DELETE answered ${del.status}`);
    deletedAt = del.endAt;
  } catch (err) {
    failures.push(`DELETE: ${(err as Error).message}`);
    deletedAt = performance.now();
  }
  deadline.at = deletedAt + GIVE_UP_MS;
  await Promise.all(loops);
  for (const client of new Set(pollers.map((p) => p.client))) client.close();

  const t0 = deletedAt;
  const now = performance.now();
  const byPair: Record<string, { ms: number; accepted: number }> = {};
  for (const pair of new Set(pollers.map((p) => p.gateway))) {
    const polls = pollers.filter((p) => p.gateway === pair).flatMap((p) => p.polls);
    byPair[pair] = pairRevocation(polls, t0, now);
  }
  const worst = Math.max(...Object.values(byPair).map((p) => p.ms));
  const accepted = Object.values(byPair).reduce((n, p) => n + p.accepted, 0);
  ctx.countA(
    pollers.filter((p) => p.gateway === a.name).reduce((n, p) => n + p.polls.length, 0) + 1,
  );
  return { ms: worst, accepted, byPair, failures };
}
