import { Agent } from 'node:https';
import pg from 'pg';
import { gatewayHome } from '../../native/home.js';
import { NginxKeyTable } from '../../sidecar/nginx/index.js';
import { keyTableLoaded } from './key-table.js';
import { CLIENTS, createClient, uniqueName } from './management.js';
import type { startNativeStack } from './native-stack.js';
import { apk } from './sidecar.js';
import type { Stack } from './stack.js';
import { callStack } from './stack-http.js';

// What the key table's fault tests share (test/e2e/key-table-faults.test.ts, the fault matrix
// and the model check): the changes PostgreSQL refuses a key by, and the faults they meet. Every
// fault is a real one on a real PostgreSQL (locks, refused connections, terminated backends,
// restarts), done the way an operator or an outage does it.

export type NativeStack = Awaited<ReturnType<typeof startNativeStack>>;
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The sidecar's statement timeout (sidecar/db/pool.ts): a lock held longer fails its read. */
export const STATEMENT_TIMEOUT_MS = 10_000;

/** A change that makes PostgreSQL refuse a key: `sql` with `$1` the client's id. */
export interface RefusingChange {
  what: string;
  sql: string;
  /** The path the key is tried on, and what it gets once the change is applied. */
  path: string;
  refused: number;
  /** The change needs an admin client (a demotion). */
  admin: boolean;
}

export const REFUSING_CHANGES: readonly RefusingChange[] = [
  {
    what: 'a deletion',
    sql: 'DELETE FROM api_clients WHERE id = $1',
    path: '/api',
    refused: 401,
    admin: false,
  },
  {
    what: 'a rotation past its grace',
    sql: "UPDATE api_clients SET key_hash = sha256('rotated'::bytea || id::text::bytea), previous_key_hash = NULL, previous_key_expires_at = NULL WHERE id = $1",
    path: '/api',
    refused: 401,
    admin: false,
  },
  {
    what: 'an expiry set in the past',
    sql: "UPDATE api_clients SET expires_at = now() - interval '1 second' WHERE id = $1",
    path: '/api',
    refused: 401,
    admin: false,
  },
  {
    what: 'permissions narrowed',
    sql: `UPDATE api_clients SET permissions = '[{"methods": ["GET"], "path": "/elsewhere/**"}]' WHERE id = $1`,
    path: '/api',
    refused: 403,
    admin: false,
  },
  {
    what: 'an admin demoted',
    sql: 'UPDATE api_clients SET is_admin = false WHERE id = $1',
    // One row: the whole list of a large table takes seconds (the probe's 3 s are for the gate).
    path: `${CLIENTS}?limit=1`,
    refused: 403,
    admin: true,
  },
];

/** A new client with a key, made through `stack`'s management API. */
export async function newKey(
  stack: Stack,
  isAdmin = false,
): Promise<{ id: number; token: string }> {
  return createClient(
    stack.baseUrl,
    stack.adminKey,
    { name: uniqueName('fault'), is_admin: isAdmin, generate_api_key: true },
    { ...(await stack.tls()), connectTo: '127.0.0.1' },
  );
}

const agents = new WeakMap<Stack, Agent>();
async function agentOf(stack: Stack): Promise<Agent> {
  let agent = agents.get(stack);
  if (!agent) {
    agent = new Agent({ ...(await stack.tls()), keepAlive: true, maxSockets: 32 });
    agents.set(stack, agent);
  }
  return agent;
}

/** Closes the kept-alive connections `status` opened to `stack`. */
export function closeAgent(stack: Stack): void {
  agents.get(stack)?.destroy();
  agents.delete(stack);
}

/** The status a caller gets for `token` (no answer within 3 s counts as 0: not a pass). */
export async function status(stack: Stack, token: string, path = '/api'): Promise<number> {
  const agent = await agentOf(stack);
  const res = await Promise.race([
    callStack(stack, path, { headers: apk(token), agent }).catch(() => null),
    sleep(3_000).then(() => null),
  ]);
  return res?.status ?? 0;
}

/** Polls until `token` gets `want` on `stack`: how long it took, or throws past `ms`. */
export async function within(
  stack: Stack,
  token: string,
  want: number,
  ms: number,
  path = '/api',
): Promise<number> {
  const started = Date.now();
  let last = 0;
  for (;;) {
    last = await status(stack, token, path);
    if (last === want) return Date.now() - started;
    if (Date.now() - started > ms) throw new Error(`not ${want} within ${ms} ms (last: ${last})`);
    await sleep(100);
  }
}

/**
 * Commits `change` (run on a connection of its own inside a transaction) and holds
 * `api_clients` locked ACCESS EXCLUSIVE while `during` runs. The lock is queued behind the
 * change's transaction, so it is taken the moment that commits, before any sidecar can read the
 * changed rows: their reads wait behind it.
 */
export async function changedThenLocked(
  databaseUrl: string,
  change: (db: pg.Client) => Promise<void>,
  during: () => Promise<void>,
): Promise<void> {
  const changer = new pg.Client({ connectionString: databaseUrl });
  const locker = new pg.Client({ connectionString: databaseUrl });
  for (const c of [changer, locker]) {
    c.on('error', () => {});
    await c.connect();
  }
  try {
    await changer.query('BEGIN');
    await change(changer);
    await locker.query('BEGIN');
    const locked = locker.query('LOCK TABLE api_clients IN ACCESS EXCLUSIVE MODE');
    await sleep(200);
    await changer.query('COMMIT');
    await locked;
    // The notices' delivery to every pair (the bound when nothing fails: milliseconds): from
    // then on each pair could have known.
    await sleep(300);
    await during();
    // Ended with its connection when `during` took the server down (then there is none left).
    await locker.query('COMMIT').catch(() => {});
  } finally {
    await changer.end().catch(() => {});
    await locker.end().catch(() => {});
  }
}

/** The sidecars' pooled backends on `sql`'s database (not their LISTEN connections). */
const POOLED = `application_name = 'gateway-sidecar' AND datname = current_database()`;
const LISTENING = `application_name LIKE 'gateway-sidecar-listen%' AND datname = current_database()`;

/** Terminates every pooled sidecar backend of the database (a read under way fails). */
export async function terminatePooled(sql: pg.Client): Promise<number> {
  const { rows } = await sql.query(
    `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE ${POOLED} AND pid <> pg_backend_pid()`,
  );
  return rows.length;
}

/** Terminates the sidecars' LISTEN connections to the database. */
export async function terminateListeners(sql: pg.Client): Promise<number> {
  const { rows } = await sql.query(
    `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE ${LISTENING} AND pid <> pg_backend_pid()`,
  );
  return rows.length;
}

/**
 * The database of `databaseUrl` refuses new connections (ALLOW_CONNECTIONS false, which binds
 * superusers too; set from the server's `postgres` database) and the sidecars' pooled backends
 * are ended, so their next read must connect and is refused; the LISTEN connections stay.
 * Undone by the returned function.
 */
export async function refuseConnections(databaseUrl: string): Promise<() => Promise<void>> {
  const url = new URL(databaseUrl);
  const name = url.pathname.slice(1);
  url.pathname = '/postgres';
  const admin = new pg.Client({ connectionString: url.toString() });
  await admin.connect();
  const db = pg.escapeIdentifier(name);
  await admin.query(`ALTER DATABASE ${db} WITH ALLOW_CONNECTIONS false`);
  await admin.query(
    `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
      WHERE application_name = 'gateway-sidecar' AND datname = $1`,
    [name],
  );
  return async () => {
    await admin.query(`ALTER DATABASE ${db} WITH ALLOW_CONNECTIONS true`);
    await admin.end();
  };
}

/** Waits until a pair's sidecar answers again and says its nginx holds the whole key table. */
export async function sidecarBack(stack: NativeStack, ms = 60_000): Promise<void> {
  const started = Date.now();
  for (;;) {
    try {
      await keyTableLoaded(stack.gateway().metricsUrl, 1_000);
      return;
    } catch (err) {
      if (Date.now() - started > ms) throw err;
    }
    await sleep(100);
  }
}

/** nginx's own reload (SIGHUP to its master): new workers, the shared memory kept. */
export async function reloadNginx(stack: NativeStack): Promise<void> {
  const pid = await stack.gateway().pid('nginx');
  if (pid === undefined) throw new Error('no nginx pid');
  process.kill(pid, 'SIGHUP');
}

/** The records nginx's replica holds for `ids` (base64, or false), read on its control socket. */
export async function heldRecords(
  stack: NativeStack,
  ids: number[],
): Promise<Map<number, string | false>> {
  const table = new NginxKeyTable(gatewayHome(stack.home).controlSocket);
  const out = new Map<number, string | false>();
  for (let i = 0; i < ids.length; i += 500) {
    const held = await table.held(ids.slice(i, i + 500));
    if (!held) throw new Error("the control socket did not answer with the replica's records");
    for (const [id, record] of held) out.set(id, record);
  }
  return out;
}
