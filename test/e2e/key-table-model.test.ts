import { randomBytes, randomInt } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { ChangeFeed } from '../../sidecar/replica/change-feed.js';
import { GONE_RECORD, keyRecordBytes } from '../../sidecar/replica/key-record-bytes.js';
import type { RunningPostgres } from '../support/embedded-postgres.js';
import {
  changedThenLocked,
  heldRecords,
  type NativeStack,
  refuseConnections,
  reloadNginx,
  sidecarBack,
  sleep,
  status,
  terminateListeners,
} from '../support/key-table-faults.js';
import { CLIENTS, createClient, uniqueName } from '../support/management.js';
import type { NotificationDropper } from '../support/notification-dropper.js';
import { startTwoPairs, type TwoPairs } from '../support/two-pairs.js';

// The key table's randomised model check (docs/consistency.md). A seeded random run of
// creations (API on either pair, or SQL), refusing changes (deletions, rotations past their
// grace, expiries in the past, narrowed permissions, demotions), restorations, and the faults of
// the matrix (a table lock past the statement timeout, a backend terminated mid-read, refused
// connections, LISTEN connections killed, notices not delivered to pair B, a sidecar killed,
// nginx reloaded, PostgreSQL restarted), while callers on both pairs use every key made so far
// and ids nobody has. Real nginx, sidecars and PostgreSQL; pair B reaches the database through
// a proxy that can stop delivering notices (test/support/notification-dropper.ts).
//
// Judged afterwards, request by request, against what PostgreSQL said when each was sent:
// - a pass for a key PostgreSQL had refused is allowed only within the stated bound after the
//   refusing change committed (PROPAGATION_MS), or during a fault this pair could not see
//   through and its bound after (BLIND_BOUND_MS);
// - a refusal of a key that existed since before the request was sent is never allowed for a
//   key fresh from its creation (the burst promise), and only within the same bounds after a
//   restoration;
// - an id nobody has never passes;
// - 0 (no answer in 3 s), 503 and 429 are answers a client retries: counted, not judged.
// After the faults stop and a quiet moment, each pair's replica equals PostgreSQL record for
// record (read through nginx's control socket) and every key gets what PostgreSQL says.
// The seed is printed; KEY_TABLE_MODEL_SEED=<seed> runs the same schedule of faults again, with
// the same operations between them (which keys they pick can differ, as creations fail or not
// during a fault, and the timings of a real system vary). KEY_TABLE_MODEL_SECONDS lengthens it.

const SEED = Number(process.env.KEY_TABLE_MODEL_SEED ?? randomInt(2 ** 31));
const SECONDS = Number(process.env.KEY_TABLE_MODEL_SECONDS ?? 60);
/** How long a change made on one pair takes to reach the other when nothing fails. */
const PROPAGATION_MS = 1_000;
/** After a fault a pair cannot see through ends: its catch-up (docs/consistency.md). */
const BLIND_BOUND_MS = 6_000;
const CALLERS_PER_PAIR = 3;

/** mulberry32: a small seeded generator, so a seed names one sequence. */
function generator(seed: number) {
  let s = seed >>> 0;
  const next = () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    int: (n: number) => Math.floor(next() * n),
    pick: <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]!,
  };
}

type Pair = 'A' | 'B';
type Refusal = 'deleted' | 'rotated' | 'expired' | 'narrowed' | 'demoted';

/** One change to a key as the test made it: issued at t0, returned (committed) at t1. */
interface Event {
  t0: number;
  t1: number;
  /** The key's state after it: null = valid. */
  refused: Refusal | null;
  kind: 'create' | 'refuse' | 'restore';
}

interface Key {
  id: number;
  token: string;
  secret: string;
  admin: boolean;
  events: Event[];
}

interface Call {
  pair: Pair;
  id: number | null;
  ts: number;
  tr: number;
  status: number;
}

interface Fault {
  what: string;
  /** Pairs that cannot see changes made during it (they catch up after). */
  blind: Pair[];
  start: number;
  end: number;
}

const REFUSE_SQL: Record<Refusal, string> = {
  deleted: 'DELETE FROM api_clients WHERE id = $1',
  rotated:
    "UPDATE api_clients SET key_hash = sha256('rotated'::bytea || id::text::bytea), previous_key_hash = NULL, previous_key_expires_at = NULL WHERE id = $1",
  expired: "UPDATE api_clients SET expires_at = now() - interval '1 second' WHERE id = $1",
  narrowed: `UPDATE api_clients SET permissions = '[{"methods": ["GET"], "path": "/elsewhere/**"}]' WHERE id = $1`,
  demoted: 'UPDATE api_clients SET is_admin = false WHERE id = $1',
};
const RESTORE_SQL: Record<Exclude<Refusal, 'deleted'>, string> = {
  rotated: "UPDATE api_clients SET key_hash = sha256(convert_to($2, 'UTF8')) WHERE id = $1",
  expired: 'UPDATE api_clients SET expires_at = NULL WHERE id = $1',
  narrowed: 'UPDATE api_clients SET permissions = NULL WHERE id = $1',
  demoted: 'UPDATE api_clients SET is_admin = true WHERE id = $1',
};
/** What a key in each state gets on its path. */
const STATUS_OF: Record<Refusal, number> = {
  deleted: 401,
  rotated: 401,
  expired: 401,
  narrowed: 403,
  demoted: 403,
};
const pathOf = (key: Key) => (key.admin ? `${CLIENTS}?limit=1` : '/api');
const stateOf = (key: Key) => key.events.at(-1)!.refused;

describe(`the key table's model check (seed ${SEED}, ${SECONDS} s)`, () => {
  let server: RunningPostgres;
  let pairsUp: TwoPairs | undefined;
  let databaseUrl: string;
  let dropper: NotificationDropper;
  const stacks = {} as Record<Pair, NativeStack>;
  let sql: pg.Client | null = null;
  let adminKey: string;

  const connectSql = async () => {
    const client = new pg.Client({ connectionString: databaseUrl });
    client.on('error', () => {});
    await client.connect();
    sql = client;
  };
  /** A statement on the test's own connection, reconnected after a restart; null if it fails. */
  const run = async (text: string, values: unknown[] = []) => {
    try {
      if (!sql) await connectSql();
      return await sql!.query(text, values);
    } catch {
      await sql?.end().catch(() => {});
      sql = null;
      return null;
    }
  };

  beforeAll(async () => {
    console.log(
      `[model] seed ${SEED}: KEY_TABLE_MODEL_SEED=${SEED} npx vitest run test/e2e/key-table-model.test.ts`,
    );
    pairsUp = await startTwoPairs('model');
    ({ server, databaseUrl, dropper } = pairsUp);
    stacks.A = pairsUp.a;
    stacks.B = pairsUp.b;
    adminKey = stacks.A.adminKey;
    await connectSql();
  }, 240_000);
  afterAll(async () => {
    await sql?.end().catch(() => {});
    await pairsUp?.close();
  });

  test(
    'random changes and faults on two pairs: nothing PostgreSQL refused passes outside the bounds, no fresh key is refused, and the replicas end equal to PostgreSQL',
    async () => {
      // Two generators, so the schedule of faults a seed names does not depend on how many
      // operations the machine's speed let run between them: `plan` draws the faults, their
      // lengths and the step counts; `rng` the operations.
      const plan = generator(SEED);
      const rng = generator(SEED ^ 0x5bd1e995);
      const keys: Key[] = [];
      const calls: Call[] = [];
      const faults: Fault[] = [];
      const counts: Record<string, number> = {};
      const count = (what: string) => {
        counts[what] = (counts[what] ?? 0) + 1;
      };
      const started = Date.now();
      const deadline = started + SECONDS * 1_000;
      let stopCalling = false;

      // --- the operations -------------------------------------------------------------------
      const createByApi = async (pair: Pair, admin: boolean) => {
        const t0 = Date.now();
        try {
          const made = await createClient(
            stacks[pair].baseUrl,
            adminKey,
            { name: uniqueName('model'), is_admin: admin, generate_api_key: true },
            { ...(await stacks[pair].tls()), connectTo: '127.0.0.1' },
          );
          const secret = made.token.slice(made.token.indexOf('.') + 1);
          keys.push({
            ...made,
            secret,
            admin,
            events: [{ t0, t1: Date.now(), refused: null, kind: 'create' }],
          });
          count(`create (API on ${pair})`);
        } catch {
          count('create refused (a fault)');
        }
      };
      const createBySql = async (n: number) => {
        const secrets = [...Array(n)].map(() => randomBytes(32).toString('base64url'));
        const t0 = Date.now();
        const res = await run(
          `INSERT INTO api_clients (name, is_admin, key_hash)
         SELECT 'model-sql-' || s.i || '-' || $2, false, sha256(convert_to(s.secret, 'UTF8'))
           FROM unnest($1::text[]) WITH ORDINALITY AS s(secret, i)
         RETURNING id::text, name`,
          [secrets, randomBytes(4).toString('hex')],
        );
        if (!res) return count('create refused (a fault)');
        const t1 = Date.now();
        for (const row of res.rows as { id: string; name: string }[]) {
          const i = Number(row.name.split('-')[2]) - 1;
          const secret = secrets[i]!;
          keys.push({
            id: Number(row.id),
            token: `${row.id}.${secret}`,
            secret,
            admin: false,
            events: [{ t0, t1, refused: null, kind: 'create' }],
          });
        }
        count('create (SQL)');
      };
      const refuse = async (key: Key, db?: pg.Client) => {
        const why: Refusal = key.admin
          ? 'demoted'
          : rng.pick(['deleted', 'rotated', 'expired', 'narrowed'] as const);
        const t0 = Date.now();
        if (db) await db.query(REFUSE_SQL[why], [key.id]);
        else if (!(await run(REFUSE_SQL[why], [key.id]))) return;
        key.events.push({ t0, t1: Date.now(), refused: why, kind: 'refuse' });
        count(`refuse (${why})`);
      };
      const restore = async (key: Key) => {
        const why = stateOf(key);
        if (why === null || why === 'deleted') return;
        const t0 = Date.now();
        const args = why === 'rotated' ? [key.id, key.secret] : [key.id];
        if (!(await run(RESTORE_SQL[why], args))) return;
        key.events.push({ t0, t1: Date.now(), refused: null, kind: 'restore' });
        count(`restore (${why})`);
      };
      const live = () => keys.filter((k) => stateOf(k) === null);
      const restorable = () => keys.filter((k) => stateOf(k) !== null && stateOf(k) !== 'deleted');

      const step = async () => {
        const r = rng.next();
        const valid = live();
        if (r < 0.3 || valid.length < 4)
          await createByApi(rng.pick(['A', 'B'] as const), rng.next() < 0.2);
        else if (r < 0.38) await createBySql(1 + rng.int(20));
        else if (r < 0.75) await refuse(rng.pick(valid));
        else if (restorable().length > 0) await restore(rng.pick(restorable()));
        await sleep(20 + rng.int(150));
      };
      /** `n` operations (about 100 ms each with their pauses). */
      const steps = async (n: number) => {
        for (let i = 0; i < n; i += 1) await step();
      };

      // --- the faults -----------------------------------------------------------------------
      const fault = async (what: string, blind: Pair[], body: () => Promise<void>) => {
        const f: Fault = { what, blind, start: Date.now(), end: 0 };
        faults.push(f);
        try {
          await body();
        } finally {
          f.end = Date.now();
          count(`fault: ${what}`);
        }
      };
      const lockedRefusal = (what: string, during: () => Promise<void>) =>
        fault(what, [], async () => {
          const valid = live();
          if (valid.length === 0) return;
          const key = rng.pick(valid);
          await changedThenLocked(databaseUrl, (db) => refuse(key, db), during);
        });
      const FAULTS: Array<() => Promise<void>> = [
        // A refusing change, then the table locked past the sidecars' statement timeout; and the
        // same with the readers waiting on the lock terminated.
        () =>
          lockedRefusal('table lock', async () => {
            await sleep(11_000);
          }),
        () =>
          lockedRefusal('backend terminated mid-read', async () => {
            await sleep(800);
            await run(
              `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
                WHERE wait_event_type = 'Lock' AND pid <> pg_backend_pid()
                  AND application_name = 'gateway-sidecar'`,
            );
            await sleep(500);
          }),
        () =>
          fault('connections refused', [], async () => {
            const allow = await refuseConnections(databaseUrl);
            try {
              await steps(15 + plan.int(25));
            } finally {
              await allow();
            }
          }),
        () =>
          fault('LISTEN connections killed', ['A', 'B'], async () => {
            await run('SELECT 1');
            await sql!.query('BEGIN');
            await terminateListeners(sql!);
            const valid = live();
            if (valid.length > 0) await refuse(rng.pick(valid), sql!);
            await sql!.query('COMMIT');
            await steps(5);
          }),
        () =>
          fault('notices not delivered to B', ['B'], async () => {
            dropper.state.drop = true;
            try {
              await steps(20 + plan.int(30));
            } finally {
              dropper.state.drop = false;
            }
          }),
        () => {
          const pair = plan.pick(['A', 'B'] as const);
          return fault(`sidecar of ${pair} killed`, [pair], async () => {
            const pid = await stacks[pair].gateway().pid('sidecar');
            if (pid !== undefined) process.kill(pid, 'SIGKILL');
            await steps(10);
            await sidecarBack(stacks[pair]);
          });
        },
        () => {
          const pair = plan.pick(['A', 'B'] as const);
          return fault(`nginx of ${pair} reloaded`, [], async () => {
            await reloadNginx(stacks[pair]);
            await steps(10);
          });
        },
        () =>
          fault('PostgreSQL restarted', ['A', 'B'], async () => {
            await sql?.end().catch(() => {});
            sql = null;
            await server.stop();
            await sleep(500 + plan.int(1_500));
            await server.start();
            await steps(5);
          }),
      ];

      // --- the callers ----------------------------------------------------------------------
      const caller = async (pair: Pair, n: number) => {
        const own = generator(SEED + 1_000 + n);
        while (!stopCalling) {
          const ts = Date.now();
          if (keys.length === 0 || own.next() < 0.1) {
            // An id nobody has, far above and just above the largest made.
            const top = keys.reduce((m, k) => Math.max(m, k.id), 0);
            const id = own.next() < 0.5 ? 1_000_000_000 + own.int(1e9) : top + 1 + own.int(3_000);
            if (keys.some((k) => k.id === id)) continue;
            const got = await status(
              stacks[pair],
              `${id}.${randomBytes(32).toString('base64url')}`,
            );
            calls.push({ pair, id: null, ts, tr: Date.now(), status: got });
            continue;
          }
          const key = own.pick(keys);
          const got = await status(stacks[pair], key.token, pathOf(key));
          calls.push({ pair, id: key.id, ts, tr: Date.now(), status: got });
        }
      };
      const callers = (['A', 'B'] as const).flatMap((pair) =>
        [...Array(CALLERS_PER_PAIR)].map((_, i) => caller(pair, pair === 'A' ? i : 100 + i)),
      );

      // --- the run --------------------------------------------------------------------------
      while (Date.now() < deadline) {
        await steps(20 + plan.int(40));
        if (Date.now() < deadline) await plan.pick(FAULTS)();
      }
      // Quiet: no more faults or changes; callers go on for the bounds.
      await sidecarBack(stacks.A);
      await sidecarBack(stacks.B);
      await sleep(BLIND_BOUND_MS);
      stopCalling = true;
      await Promise.all(callers);

      // --- the verdicts ---------------------------------------------------------------------
      const byId = new Map(keys.map((k) => [k.id, k]));
      const allowance = (pair: Pair, since: number, ts: number) => {
        if (ts <= since + PROPAGATION_MS) return true;
        return faults.some(
          (f) => f.blind.includes(pair) && f.start <= ts && ts <= f.end + BLIND_BOUND_MS,
        );
      };
      const violations: string[] = [];
      const unanswered: Record<string, number> = {};
      for (const c of calls) {
        // Answers a client retries: no answer in 3 s, 503 (nobody could answer), 429 (the id's
        // failure budget, spent by the callers' guesses at ids just above the largest, before the
        // id was made and while its creation had not reached this pair).
        if (c.status === 0 || c.status === 503 || c.status === 429) {
          unanswered[`${c.pair} ${c.status}`] = (unanswered[`${c.pair} ${c.status}`] ?? 0) + 1;
          continue;
        }
        const at = `${c.pair} at +${c.ts - started} ms`;
        if (c.id === null) {
          if (c.status === 200) violations.push(`${at}: an id nobody has passed`);
          continue;
        }
        const key = byId.get(c.id)!;
        // The state committed before the request was sent, and whether a change was under way.
        const before = key.events.filter((e) => e.t1 < c.ts);
        const last = before.at(-1);
        const inFlight = key.events.some((e) => e.t1 >= c.ts && e.t0 < c.tr);
        if (!last) {
          // Sent before its creation returned: anything goes but a pass before it existed.
          continue;
        }
        if (inFlight) continue;
        if (c.status === 200 && last.refused !== null) {
          // When did this run of refusal start (a refusal after a refusal keeps the first)?
          let since = last.t1;
          for (let i = before.length - 1; i >= 0 && before[i]!.refused !== null; i -= 1)
            since = before[i]!.t1;
          if (!allowance(c.pair, since, c.ts)) {
            violations.push(
              `${at}: key ${key.id} passed ${c.ts - since} ms after it was ${last.refused}`,
            );
          }
        } else if (c.status !== 200 && last.refused === null) {
          const refusedFresh = last.kind === 'create';
          if (refusedFresh || !allowance(c.pair, last.t1, c.ts)) {
            violations.push(
              `${at}: key ${key.id} refused ${c.status} ${c.ts - last.t1} ms after its ${last.kind}`,
            );
          }
        }
      }
      console.log(
        `[model] seed ${SEED}: ${calls.length} requests, ${keys.length} keys; ${JSON.stringify(counts)}; no answer, 503 or 429: ${JSON.stringify(unanswered)}; faults: ${faults.map((f) => `${f.what} +${f.start - started}..+${f.end - started} ms`).join(', ')}`,
      );
      expect(violations.slice(0, 20), `seed ${SEED}`).toEqual([]);

      // Every key now gets what PostgreSQL says, on both pairs.
      const wrong: string[] = [];
      for (const key of keys) {
        const state = stateOf(key);
        const want = state === null ? 200 : STATUS_OF[state];
        for (const pair of ['A', 'B'] as const) {
          const got = await status(stacks[pair], key.token, pathOf(key));
          // A key refused 401 may meet its id's failure budget first (its old secret, tried again
          // and again): 429 is a refusal too.
          if (got !== want && !(want === 401 && got === 429))
            wrong.push(`${pair}: key ${key.id} (${state ?? 'valid'}) got ${got}, not ${want}`);
        }
      }
      expect(wrong.slice(0, 20), `seed ${SEED}`).toEqual([]);

      // And each pair's replica is PostgreSQL's table, record for record.
      await connectSql();
      const rows: Array<[number, string]> = [];
      for await (const batch of new ChangeFeed(sql!).all(1_000)) {
        for (const row of batch) rows.push([row.id, keyRecordBytes(row).toString('base64')]);
      }
      const inPostgres = new Set(rows.map(([id]) => id));
      const gone = GONE_RECORD.toString('base64');
      for (const pair of ['A', 'B'] as const) {
        const held = await heldRecords(stacks[pair], [
          ...rows.map(([id]) => id),
          ...keys.map((k) => k.id).filter((id) => !inPostgres.has(id)),
        ]);
        const differ: string[] = [];
        for (const [id, record] of rows) if (held.get(id) !== record) differ.push(`${id}: differs`);
        for (const key of keys) {
          if (inPostgres.has(key.id)) continue;
          const record = held.get(key.id);
          if (record !== false && record !== gone) differ.push(`${key.id}: deleted, still held`);
        }
        expect(differ.slice(0, 20), `seed ${SEED}, pair ${pair}`).toEqual([]);
      }
    },
    (SECONDS + 240) * 1_000,
  );
});
