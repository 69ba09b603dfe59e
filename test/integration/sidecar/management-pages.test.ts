import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { freshDatabase } from '../../support/database.js';
import { http } from '../../support/http.js';
import { CLIENTS, createClient } from '../../support/management.js';
import { apk, startTestSidecar, type TestSidecar } from '../../support/sidecar.js';

interface Item {
  id: number;
  name: string;
  api_client_id: string | null;
}
interface ListBody {
  items: Item[];
  response_metadata: { total: number; next_cursor: string | null; prev_cursor: string | null };
}

let sidecar: TestSidecar;
beforeAll(async () => {
  sidecar = await startTestSidecar(await freshDatabase());
  // Names out of id order, and some clients without api_client_id (they sort last ascending).
  for (const [i, name] of ['kilo', 'alpha', 'echo', 'zulu', 'bravo', 'mike', 'delta'].entries()) {
    await createClient(sidecar.url, sidecar.adminKey, {
      name,
      is_admin: false,
      generate_api_key: true,
      ...(i % 3 === 0 ? {} : { api_client_id: `sub-${name}` }),
    });
  }
});
afterAll(() => sidecar?.close());

async function list(query: string): Promise<ListBody> {
  const res = await http(`${sidecar.url}${CLIENTS}${query}`, { headers: apk(sidecar.adminKey) });
  expect(res.status, res.text).toBe(200);
  return res.json as ListBody;
}

/** Follows next_cursor from the first page and returns every item seen. */
async function walk(sort: string, limit: number): Promise<Item[]> {
  const seen: Item[] = [];
  let page = await list(`?sort=${sort}&limit=${limit}`);
  seen.push(...page.items);
  while (page.response_metadata.next_cursor) {
    page = await list(`?limit=${limit}&cursor=${page.response_metadata.next_cursor}`);
    seen.push(...page.items);
  }
  return seen;
}

const byText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

describe('GET /v1/management/api-clients?sort=&limit=&cursor=', () => {
  test('every sort walks every client once, in its order (api_client_id: nulls last, then reversed)', async () => {
    const all = (await list('')).items;
    const expected: Record<string, Item[]> = {
      id: [...all].sort((a, b) => a.id - b.id),
      name: [...all].sort((a, b) => byText(a.name, b.name)),
      api_client_id: [...all].sort(
        (a, b) =>
          Number(a.api_client_id === null) - Number(b.api_client_id === null) ||
          byText(a.api_client_id ?? '', b.api_client_id ?? '') ||
          a.id - b.id,
      ),
    };
    for (const [sort, order] of Object.entries(expected)) {
      const ids = order.map((i) => i.id);
      expect(
        (await walk(sort, 3)).map((i) => i.id),
        sort,
      ).toEqual(ids);
      expect(
        (await walk(`-${sort}`, 2)).map((i) => i.id),
        `-${sort}`,
      ).toEqual([...ids].reverse());
    }
  });

  test('prev_cursor leads back to exactly the previous page; the first page has none', async () => {
    const first = await list('?sort=name&limit=3');
    expect(first.response_metadata.prev_cursor).toBeNull();
    const second = await list(`?limit=3&cursor=${first.response_metadata.next_cursor}`);
    expect(second.response_metadata.prev_cursor).not.toBeNull();
    const back = await list(`?limit=3&cursor=${second.response_metadata.prev_cursor}`);
    expect(back.items).toEqual(first.items);
    expect(back.response_metadata.prev_cursor).toBeNull();
    const forward = await list(`?limit=3&cursor=${back.response_metadata.next_cursor}`);
    expect(forward.items).toEqual(second.items);
  });

  test('cursors stay correct while clients are inserted and deleted between pages', async () => {
    const before = (await list('?sort=name')).items;
    const seen: Item[] = [];
    let page = await list('?sort=name&limit=2');
    let round = 0;
    const created: number[] = [];
    const deleted = new Set<number>();
    while (true) {
      seen.push(...page.items);
      const ahead = before.filter((i) => !seen.some((s) => s.id === i.id) && !deleted.has(i.id));
      if (ahead.length > 2) {
        const doomed = ahead[ahead.length - 1]!.id;
        await http(`${sidecar.url}${CLIENTS}/${doomed}`, {
          method: 'DELETE',
          headers: apk(sidecar.adminKey),
        });
        deleted.add(doomed);
      }
      // Between every two pages: one new client anywhere in the order, one deleted ahead.
      round += 1;
      created.push(
        (
          await createClient(sidecar.url, sidecar.adminKey, {
            name: `${round % 2 ? 'aa' : 'zz'}-inserted-${round}`,
            is_admin: false,
            generate_api_key: true,
          })
        ).id,
      );
      if (!page.response_metadata.next_cursor) break;
      page = await list(`?limit=2&cursor=${page.response_metadata.next_cursor}`);
    }
    const seenIds = seen.map((i) => i.id);
    // No client shows twice; every client present from start to end shows exactly once, in order.
    expect(new Set(seenIds).size).toBe(seenIds.length);
    const names = seen.map((i) => i.name);
    expect(names).toEqual([...names].sort(byText));
    expect(deleted.size).toBeGreaterThan(0);
    for (const item of before) {
      expect(seenIds.filter((id) => id === item.id)).toHaveLength(deleted.has(item.id) ? 0 : 1);
    }
    for (const id of created) {
      await http(`${sidecar.url}${CLIENTS}/${id}`, {
        method: 'DELETE',
        headers: apk(sidecar.adminKey),
      });
    }
  });

  test('a cursor is opaque, tied to its sort, and refused when forged', async () => {
    const first = await list('?sort=name&limit=2');
    const cursor = first.response_metadata.next_cursor!;
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
    const clash = await http(`${sidecar.url}${CLIENTS}?sort=id&cursor=${cursor}`, {
      headers: apk(sidecar.adminKey),
    });
    expect(clash.status).toBe(400);
    expect(clash.json).toEqual({
      errors: [expect.objectContaining({ code: 'INVALID_FIELD', field: 'cursor' })],
    });
    const forged = Buffer.from('{"s":"name","d":"a","k":[1,2]}').toString('base64url');
    for (const bad of [forged, '3', 'not a cursor', 'A'.repeat(5000)]) {
      const res = await http(`${sidecar.url}${CLIENTS}?cursor=${encodeURIComponent(bad)}`, {
        headers: apk(sidecar.adminKey),
      });
      expect(res.status, bad).toBe(400);
    }
    const sort = await http(`${sidecar.url}${CLIENTS}?sort=created_at`, {
      headers: apk(sidecar.adminKey),
    });
    expect(sort.status).toBe(400);
    expect(sort.json).toEqual({ errors: [expect.objectContaining({ field: 'sort' })] });
  });
});
