import { join } from 'node:path';
import pg from 'pg';
import { Client } from '../load/client.js';
import { curlGet } from '../load/curl-get.js';
import { rssMb, rssSampler } from '../rss.js';
import { BENCH_PATH } from '../stack/engine-session.js';
import { fillTo } from '../stack/fill-clients.js';
import { CLIENTS_PATH } from '../stack/setup.js';
import { percentile } from '../stats.js';
import type { PhaseContext } from './context.js';
import { createKeys } from './keys.js';

/** How often the sidecar's RSS is read while the lists stream. */
const RSS_EVERY_MS = 20;

export interface DuringListResult {
  /** Clients in the table, so in every list. */
  clients: number;
  fillSeconds: number;
  probes: number;
  /** Latency of each fresh key's first request, ms (client side, keep-alive). */
  fresh: { p50: number; p99: number; max: number };
  /** Lists that ran to their end while the keys were probed, and the last one's size. */
  lists: number;
  listMs: number;
  listBytes: number;
  /** Sidecar B's RSS, MB: before the first list, the highest 20 ms sample, their difference. */
  rss: { before: number; peak: number; growth: number };
  /** Probes not answered 200 and lists not answered 200, by kind: any makes the rows invalid. */
  failures: number;
  failureKinds: Record<string, number>;
}

/**
 * Issue 23: a key never seen before while a list of every client streams. The table is topped
 * up to `listAllClients` by SQL, `listAllProbes` keys are created through the API, then on
 * gateway B (the static responder behind it) `GET /v1/management/api-clients/` runs back to
 * back through curl (its own process: its TLS and 16 MB bodies stay off the event loop that
 * times the probes) while each fresh key is presented once, one at a time on one keep-alive
 * connection. Sidecar B's RSS is sampled every 20 ms meanwhile; the growth is the highest
 * sample minus the one before the first list.
 */
export async function measureFirstSightDuringList(ctx: PhaseContext): Promise<DuringListResult> {
  const { a, b, db } = ctx.stack;
  const fillSeconds = await fillTo(db.url, ctx.options.listAllClients);
  const clients = await countClients(db.url);
  const keys = await createKeys(ctx, ctx.options.listAllProbes, 'bench-list-probe');
  const failureKinds: Record<string, number> = {};
  const fail = (kind: string) => {
    failureKinds[kind] = (failureKinds[kind] ?? 0) + 1;
  };
  const probe = new Client(b.url, b.ca, 1);
  const ask = (key: string) => probe.send('GET', BENCH_PATH, { Authorization: `apk ${key}` });
  const fresh: number[] = [];
  let lists = 0;
  let last = { ms: Number.NaN, bytes: Number.NaN };
  let before = Number.NaN;
  let peak = Number.NaN;
  try {
    await ask(ctx.stack.apiKey); // the connection's TLS handshake is not part of any figure
    before = rssMb(b.pids.sidecar);
    const sampler = rssSampler(b.pids.sidecar, RSS_EVERY_MS);
    let listing = true;
    const caFile = join(b.configDir, 'nginx/ssl/nginx.crt');
    const admin = { Authorization: `apk ${a.adminKey}` };
    const background = (async () => {
      while (listing) {
        try {
          const res = await curlGet(`${b.url}${CLIENTS_PATH}/`, caFile, admin, false);
          if (res.status !== 200) {
            fail(`list answered ${res.status}`);
            return;
          }
          lists += 1;
          last = { ms: res.ms, bytes: res.bytes };
        } catch (err) {
          fail(`list: ${(err as Error).message.split('\n', 1)[0]}`);
          return;
        }
      }
    })();
    // Let the first list get going before probing.
    await new Promise((r) => setTimeout(r, 100));
    try {
      for (const key of keys) {
        const res = await ask(key.token);
        if (res.status !== 200) fail(`fresh key answered ${res.status}`);
        fresh.push(res.ms);
      }
    } finally {
      listing = false;
      await background;
      peak = sampler.stop();
    }
  } finally {
    probe.close();
  }
  return {
    clients,
    fillSeconds,
    probes: fresh.length,
    fresh: { p50: percentile(fresh, 50), p99: percentile(fresh, 99), max: percentile(fresh, 100) },
    lists,
    listMs: last.ms,
    listBytes: last.bytes,
    rss: { before, peak, growth: peak - before },
    failures: Object.values(failureKinds).reduce((n, k) => n + k, 0),
    failureKinds,
  };
}

async function countClients(databaseUrl: string): Promise<number> {
  const db = new pg.Client({ connectionString: databaseUrl });
  await db.connect();
  try {
    const { rows } = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM api_clients');
    return rows[0]?.n ?? 0;
  } finally {
    await db.end();
  }
}
