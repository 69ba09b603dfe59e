import pg from 'pg';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { freshDatabase } from '../../support/database.js';
import { http } from '../../support/http.js';
import { CLIENTS } from '../../support/management.js';
import { apk, startTestSidecar, type TestSidecar } from '../../support/sidecar.js';

interface Item {
  id: number;
  name: string;
  api_client_id: string | null;
  created_at: string;
}
interface ListBody {
  items: Item[];
  response_metadata: { total: number; next_cursor: string | null; prev_cursor: string | null };
}

// More than two batches of the stream (1000 rows each), with names that need escaping and
// timestamps whose milliseconds JavaScript and PostgreSQL could round apart.
const ROWS = 2345;
const NAMES = [
  'quote " and \\ backslash',
  'tab\tnew\nline\u0001\u001f',
  'é ü 漢字 😀',
  'line\u2028sep',
  '</script>',
];
const FRACTIONS = ['.029', '.000001', '.999999', '.57', '.0295', '.1', '.289', '.5789'];

let sidecar: TestSidecar;
beforeAll(async () => {
  const url = await freshDatabase();
  sidecar = await startTestSidecar(url);
  const db = new pg.Client({ connectionString: url });
  await db.connect();
  try {
    await db.query(
      `INSERT INTO api_clients (name, is_admin, api_client_id, key_hash, created_at,
         expires_at, last_used_at, previous_key_hash, previous_key_expires_at)
       SELECT CASE WHEN g <= $2 THEN ($1::text[])[g] || ' #' || g ELSE 'row-' || g END,
              g % 7 = 0,
              CASE WHEN g % 3 = 0 THEN 'subject-' || (g % 1000) || '-' || g END,
              CASE WHEN g % 3 <> 0 THEN sha256(g::text::bytea) END,
              ('2026-11-23 12:34:' || lpad((g % 60)::text, 2, '0') || ($3::text[])[1 + g % $4])::timestamptz,
              -- The lifecycle's times, with the same fractions: set on some rows, null on others;
              -- a previous key whose grace runs (shown) or has ended (shown as null).
              CASE WHEN g % 4 = 0 THEN ('2099-01-02 03:04:05' || ($3::text[])[1 + g % $4])::timestamptz END,
              CASE WHEN g % 5 <> 0 THEN ('2026-11-20 01:02:' || lpad((g % 60)::text, 2, '0') || ($3::text[])[1 + (g + 3) % $4])::timestamptz END,
              CASE WHEN g % 6 = 1 THEN sha256(('p' || g)::text::bytea) END,
              CASE WHEN g % 6 = 1 THEN
                (CASE WHEN g % 12 = 1 THEN '2099-05-06 07:08:09' ELSE '2020-05-06 07:08:09' END
                 || ($3::text[])[1 + (g + 5) % $4])::timestamptz END
       FROM generate_series(1, $5) AS g`,
      [NAMES, NAMES.length, FRACTIONS, FRACTIONS.length, ROWS],
    );
  } finally {
    await db.end();
  }
});
afterAll(() => sidecar?.close());

const get = async (query: string) => {
  const res = await http(`${sidecar.url}${CLIENTS}${query}`, { headers: apk(sidecar.adminKey) });
  expect(res.status, res.text).toBe(200);
  return res;
};

/** Every item through pages of 1000 (serialised by JavaScript, as before streaming). */
async function paged(sort: string): Promise<Item[]> {
  const items: Item[] = [];
  let body = (await get(`?sort=${sort}&limit=1000`)).json as ListBody;
  items.push(...body.items);
  while (body.response_metadata.next_cursor) {
    body = (await get(`?limit=1000&cursor=${body.response_metadata.next_cursor}`)).json as ListBody;
    items.push(...body.items);
  }
  return items;
}

describe('GET /v1/management/api-clients without limit (streamed)', () => {
  test('the body is byte for byte what JSON.stringify makes of the same items', async () => {
    const res = await get('');
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    const items = await paged('id');
    expect(items).toHaveLength(ROWS + 1);
    const expected = JSON.stringify({
      items,
      response_metadata: { total: ROWS + 1, next_cursor: null, prev_cursor: null },
    });
    expect(res.text).toBe(expected);
    // The tricky fractions did reach the body: .029 is 28 ms in node-postgres and here alike.
    expect(res.text).toContain('12:34:');
    // (Minutes and seconds survive the server's time zone; the hour may not.)
    expect(res.text).toMatch(/"expires_at":"2099-01-0\dT\d\d:04:05\.\d{3}Z"/);
    expect(res.text).toMatch(/"previous_key_expires_at":"2099-05-0\dT\d\d:08:09\.\d{3}Z"/);
    expect(res.text).not.toMatch(/"previous_key_expires_at":"2020/);
    expect(res.text).toMatch(/"last_used_at":"2026-11-\d\dT\d\d:02:\d\d\.\d{3}Z"/);
  });

  test('HEAD answers the headers of the list without a body', async () => {
    const res = await http(`${sidecar.url}${CLIENTS}`, {
      method: 'HEAD',
      headers: apk(sidecar.adminKey),
    });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(res.text).toBe('');
  });

  test('every order streams what its pages walk, in that order', async () => {
    for (const sort of ['-id', 'name', '-name', 'api_client_id', '-api_client_id']) {
      const body = (await get(`?sort=${sort}`)).json as ListBody;
      expect(
        body.items.map((i) => i.id),
        sort,
      ).toEqual((await paged(sort)).map((i) => i.id));
      expect(body.response_metadata.total).toBe(ROWS + 1);
    }
  });

  test('from a cursor: the rest after it, or everything before it, with the way back', async () => {
    const all = ((await get('?sort=name')).json as ListBody).items;
    const page = (await get('?sort=name&limit=600')).json as ListBody;
    const after = (await get(`?cursor=${page.response_metadata.next_cursor}`)).json as ListBody;
    expect(after.items.map((i) => i.id)).toEqual(all.slice(600).map((i) => i.id));
    expect(after.response_metadata.next_cursor).toBeNull();
    expect(after.response_metadata.prev_cursor).not.toBeNull();
    expect(after.response_metadata.total).toBe(ROWS + 1);
    // Back from there without limit: everything before it, in order, and the way forward again.
    const before = (await get(`?cursor=${after.response_metadata.prev_cursor}`)).json as ListBody;
    expect(before.items.map((i) => i.id)).toEqual(all.slice(0, 600).map((i) => i.id));
    expect(before.response_metadata.prev_cursor).toBeNull();
    const again = (await get(`?cursor=${before.response_metadata.next_cursor}`)).json as ListBody;
    expect(again.items.map((i) => i.id)).toEqual(all.slice(600).map((i) => i.id));
  });

  test('past the last client: an empty list that still has its metadata', async () => {
    const last = (await get('?sort=-id&limit=1')).json as ListBody;
    const beyond = (await get(`?sort=-id&limit=1&cursor=${last.response_metadata.next_cursor}`))
      .json as ListBody;
    const rest = (
      await get(
        `?cursor=${beyond.response_metadata.next_cursor ?? last.response_metadata.next_cursor}`,
      )
    ).json as ListBody;
    expect(rest.items.length).toBeLessThan(ROWS + 1);
    expect(rest.response_metadata.total).toBe(ROWS + 1);
  });
});
