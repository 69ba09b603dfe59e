import pg from 'pg';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { freshDatabase } from '../../support/database.js';
import { http } from '../../support/http.js';
import { CLIENTS, createClient } from '../../support/management.js';
import { apk, startTestSidecar, type TestSidecar } from '../../support/sidecar.js';

// The listing's `name` filter against real PostgreSQL: a case-insensitive prefix, its own
// wildcards taken literally, in pages, streamed and counted, served by an index.

let sidecar: TestSidecar;
let db: pg.Client;
const NAMES = ['Alpha-1', 'alpha-2', 'ALPHABET', 'beta', 'al%x', 'al_y', 'alz'];
beforeAll(async () => {
  const url = await freshDatabase();
  sidecar = await startTestSidecar(url);
  db = new pg.Client({ connectionString: url });
  await db.connect();
  for (const name of NAMES) {
    await createClient(sidecar.url, sidecar.adminKey, {
      name,
      is_admin: false,
      generate_api_key: true,
    });
  }
});
afterAll(async () => {
  await db?.end();
  await sidecar?.close();
});

type Listing = {
  items: { name: string }[];
  response_metadata: { total: number; next_cursor: string | null };
};
const list = async (query: string) => {
  const res = await http(`${sidecar.url}${CLIENTS}?${query}`, {
    headers: apk(sidecar.adminKey),
  });
  return { status: res.status, body: res.json as Listing };
};
const names = (l: Listing) => l.items.map((c) => c.name);

describe('GET /v1/management/api-clients?name=', () => {
  test('a case-insensitive prefix, paged and streamed alike, with its own total', async () => {
    const paged = await list('name=ALPHA&sort=name&limit=10');
    expect(paged.status).toBe(200);
    expect(names(paged.body)).toEqual(['ALPHABET', 'Alpha-1', 'alpha-2'].sort());
    expect(paged.body.response_metadata.total).toBe(3);
    const streamed = await list('name=alpha&sort=name');
    expect(names(streamed.body)).toEqual(names(paged.body));
    expect(streamed.body.response_metadata.total).toBe(3);
    expect(names((await list('name=zzz&limit=5')).body)).toEqual([]);
  });

  test('pages follow the filter when it is sent again with the cursor', async () => {
    const first = await list('name=al&sort=name&limit=2');
    expect(first.body.response_metadata.total).toBe(6);
    const seen = [...names(first.body)];
    let cursor = first.body.response_metadata.next_cursor;
    while (cursor) {
      const next = await list(`name=al&limit=2&cursor=${encodeURIComponent(cursor)}`);
      seen.push(...names(next.body));
      cursor = next.body.response_metadata.next_cursor;
    }
    expect(seen).toHaveLength(6);
    expect(seen.every((n) => n.toLowerCase().startsWith('al'))).toBe(true);
  });

  test('% and _ in the filter are literal characters, not wildcards', async () => {
    expect(names((await list(`name=${encodeURIComponent('al%')}&limit=10`)).body)).toEqual([
      'al%x',
    ]);
    expect(names((await list('name=al_&limit=10')).body)).toEqual(['al_y']);
  });

  test.each([['name='], ['name=a&name=b'], [`name=${'x'.repeat(1025)}`]])(
    '%s is a 400 naming the field',
    async (query) => {
      const res = await list(query);
      expect(res.status).toBe(400);
      expect((res.body as unknown as { errors: { field: string }[] }).errors[0]!.field).toBe(
        'name',
      );
    },
  );

  test('PostgreSQL answers the filter from its index, not by reading the table', async () => {
    await db.query(
      `INSERT INTO api_clients (name, is_admin, api_client_id)
       SELECT 'filler-' || n, false, 'filler-' || n FROM generate_series(1, 20000) AS n`,
    );
    await db.query('ANALYZE api_clients');
    const { rows } = await db.query<{ 'QUERY PLAN': string }>(
      "EXPLAIN SELECT id FROM api_clients WHERE lower(name) LIKE lower('Alph%') ORDER BY id LIMIT 11",
    );
    const plan = rows.map((r) => r['QUERY PLAN']).join('\n');
    expect(plan).toContain('api_clients_name_prefix');
    expect(plan).not.toMatch(/Seq Scan/);
  });
});
