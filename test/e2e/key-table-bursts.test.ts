import { createHash, randomBytes } from 'node:crypto';
import { Agent } from 'node:https';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { freshDatabase } from '../support/database.js';
import { keyTableLoaded } from '../support/key-table.js';
import { createClient, uniqueName } from '../support/management.js';
import { startNativeStack } from '../support/native-stack.js';
import { apk } from '../support/sidecar.js';
import type { Stack } from '../support/stack.js';
import { callStack } from '../support/stack-http.js';

// Bursts of changes never refuse a key that exists (docs/decisions/20261201-no-change-skipped.md):
// while a notice is pending, an id the replica does not hold is asked about. Real nginx,
// sidecars and PostgreSQL, two pairs on one database; asserted: what callers got.

type NativeStack = Awaited<ReturnType<typeof startNativeStack>>;
const secretOf = (tag: string, id: number) =>
  createHash('sha256').update(`${tag}:${id}`).digest('base64url');
/** The same secret in SQL (base64url of SHA-256 of `<tag>:<id>`): `$1` the tag. */
const SECRET_SQL =
  "translate(rtrim(encode(sha256(convert_to($1 || ':' || id::text, 'UTF8')), 'base64'), '='), '+/', '-_')";

describe('bursts of changes', () => {
  let a: NativeStack;
  let b: NativeStack;
  let databaseUrl: string;
  const agents = new Map<Stack, Agent>();

  const call = async (stack: Stack, token: string) =>
    (
      await callStack(stack, '/api', {
        headers: apk(token),
        agent: agents.get(stack),
      })
    ).status;

  beforeAll(async () => {
    databaseUrl = await freshDatabase();
    a = await startNativeStack({ env: { DATABASE_URL: databaseUrl } });
    b = await startNativeStack({ env: { DATABASE_URL: databaseUrl } });
    await keyTableLoaded(a.gateway().metricsUrl);
    await keyTableLoaded(b.gateway().metricsUrl);
    for (const stack of [a, b]) {
      agents.set(stack, new Agent({ ...(await stack.tls()), keepAlive: true, maxSockets: 16 }));
    }
  }, 240_000);
  afterAll(async () => {
    for (const agent of agents.values()) agent.destroy();
    await a?.close();
    await b?.close();
  });

  test('10^5 clients imported by SQL and used at once on both pairs: no 401 for any of them', async () => {
    const tag = randomBytes(3).toString('hex');
    const db = new pg.Client({ connectionString: databaseUrl });
    await db.connect();
    let ids: number[];
    try {
      const { rows } = await db.query<{ id: string }>(
        `WITH s AS (
           SELECT nextval(pg_get_serial_sequence('api_clients', 'id')) AS id, g
             FROM generate_series(1, 100000) AS g
         )
         INSERT INTO api_clients (id, name, is_admin, key_hash) OVERRIDING SYSTEM VALUE
         SELECT id, 'burst-' || $1 || '-' || g, false, sha256(convert_to(${SECRET_SQL}, 'UTF8'))
           FROM s
         RETURNING id::text`,
        [tag],
      );
      ids = rows.map((r) => Number(r.id)).sort((x, y) => x - y);
    } finally {
      await db.end();
    }
    // At once: the first 10^4 of them, 16 callers on each pair, every answer counted.
    const first = ids.slice(0, 10_000);
    const statuses = new Map<number, number>();
    const t0 = Date.now();
    const refused: string[] = [];
    let next = 0;
    const caller = async (stack: Stack) => {
      for (;;) {
        const i = next++;
        if (i >= 6_000) return;
        const id = first[(i * 7919) % first.length]!;
        const status = await call(stack, `${id}.${secretOf(tag, id)}`);
        if (status !== 200)
          refused.push(
            `${status} for id ${id} on ${stack === a ? 'A' : 'B'} at ${Date.now() - t0} ms`,
          );
        statuses.set(status, (statuses.get(status) ?? 0) + 1);
      }
    };
    await Promise.all([...Array(16)].flatMap(() => [caller(a), caller(b)]));
    expect(refused.join('\n')).toBe('');
    expect(Object.fromEntries(statuses)).toEqual({ 200: 6_000 });
  }, 180_000);

  test('2,000 clients created on one pair by 8 creators at once, each used on the other right after its 201: no 401', async () => {
    const tls = { ...(await a.tls()), connectTo: '127.0.0.1' };
    const refused: number[] = [];
    let made = 0;
    const creator = async () => {
      while (made < 2_000) {
        made += 1;
        const key = await createClient(
          a.baseUrl,
          a.adminKey,
          { name: uniqueName('burst'), is_admin: false, generate_api_key: true },
          tls,
        );
        const status = await call(b, key.token);
        if (status !== 200) refused.push(status);
      }
    };
    await Promise.all([...Array(8)].map(creator));
    expect(refused).toEqual([]);
  }, 300_000);
});
