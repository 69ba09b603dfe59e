import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { Client } from '../load/client.js';
import { CLIENTS_PATH } from '../stack/setup.js';
import { percentile } from '../stats.js';
import type { PhaseContext } from './context.js';

export interface ManagementResult {
  creates: number;
  /** POST api-clients with a new key, one at a time, ms. */
  create: { p50: number; p99: number };
  /** Clients in the table when listed, and the items the list returned. */
  clients: number;
  listedItems: number;
  /** GET api-clients (no limit: every client in one answer), ms. */
  list: { p50: number; max: number; bytes: number };
  failures: number;
}

/**
 * Create: sequential POSTs through gateway A (nginx, the auth subrequest for the admin key,
 * the sidecar's own re-check, the INSERT), timed by the caller. List: the table is first
 * filled to `listClients` rows with one SQL INSERT (a set-up shortcut: only the listing is
 * measured), then the whole list is fetched `listRuns` times.
 */
export async function measureManagement(ctx: PhaseContext): Promise<ManagementResult> {
  const { a, db } = ctx.stack;
  const admin = { Authorization: `apk ${a.adminKey}` };
  const client = new Client(a.url, a.ca, 1);
  const tag = randomBytes(3).toString('hex');
  const createMs: number[] = [];
  let failures = 0;
  const pool = new pg.Pool({ connectionString: db.url, max: 1 });
  try {
    await client.send('GET', `${CLIENTS_PATH}?limit=1`, admin); // connection set-up, not timed
    for (let i = 0; i < ctx.options.creates; i += 1) {
      const res = await client.send('POST', CLIENTS_PATH, admin, {
        name: `bench-create-${tag}-${i}`,
        is_admin: false,
        generate_api_key: true,
      });
      if (res.status !== 201) failures += 1;
      createMs.push(res.ms);
    }
    const { rows } = await pool.query<{ n: string }>('SELECT count(*) AS n FROM api_clients');
    const missing = ctx.options.listClients - Number(rows[0]!.n);
    if (missing > 0) {
      // Token-only clients (no key hash): valid rows, listed like any other.
      await pool.query(
        `INSERT INTO api_clients (name, is_admin, api_client_id)
         SELECT 'bench-list-' || $1 || '-' || g, false, 'bench-list-' || $1 || '-' || g
         FROM generate_series(1, $2::int) AS g`,
        [tag, missing],
      );
    }
    const clients = Number(
      (await pool.query<{ n: string }>('SELECT count(*) AS n FROM api_clients')).rows[0]!.n,
    );
    const listMs: number[] = [];
    let listedItems = 0;
    let bytes = 0;
    for (let i = 0; i < ctx.options.listRuns; i += 1) {
      const res = await client.send('GET', CLIENTS_PATH, admin);
      if (res.status !== 200) failures += 1;
      else listedItems = (JSON.parse(res.text) as { items: unknown[] }).items.length;
      bytes = Buffer.byteLength(res.text);
      listMs.push(res.ms);
    }
    ctx.countA(1 + createMs.length + listMs.length);
    return {
      creates: createMs.length,
      create: { p50: percentile(createMs, 50), p99: percentile(createMs, 99) },
      clients,
      listedItems,
      list: { p50: percentile(listMs, 50), max: percentile(listMs, 100), bytes },
      failures,
    };
  } finally {
    client.close();
    await pool.end();
  }
}
