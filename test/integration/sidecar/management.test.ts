import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { freshDatabase } from '../../support/database.js';
import { http } from '../../support/http.js';
import { CLIENTS, createClient, uniqueName } from '../../support/management.js';
import { sharedSecurityTests } from '../../support/shared-security.js';
import { apk, startTestSidecar, type TestSidecar } from '../../support/sidecar.js';

let sidecar: TestSidecar;
let userKey: string;
let deletedKey: string;

beforeAll(async () => {
  sidecar = await startTestSidecar(await freshDatabase());
  userKey = (
    await createClient(sidecar.url, sidecar.adminKey, {
      name: 'plain user',
      is_admin: false,
      generate_api_key: true,
    })
  ).token;
  const doomed = await createClient(sidecar.url, sidecar.adminKey, {
    name: 'doomed',
    is_admin: true,
    generate_api_key: true,
  });
  deletedKey = doomed.token;
  const del = await http(`${sidecar.url}${CLIENTS}/${doomed.id}`, {
    method: 'DELETE',
    headers: apk(sidecar.adminKey),
  });
  expect(del.status).toBe(200);
});
afterAll(() => sidecar?.close());

const admin = () => apk(sidecar.adminKey);

describe('every management route refuses bad credentials', () => {
  const ctx = () => ({ baseUrl: sidecar.url, adminKey: sidecar.adminKey, userKey, deletedKey });
  sharedSecurityTests(ctx, {
    method: 'POST',
    path: CLIENTS,
    json: { name: 'x', is_admin: false, generate_api_key: true },
  });
  sharedSecurityTests(ctx, { method: 'GET', path: CLIENTS });
  sharedSecurityTests(ctx, { method: 'GET', path: `${CLIENTS}/` });
  sharedSecurityTests(ctx, { method: 'GET', path: `${CLIENTS}/1` });
  sharedSecurityTests(ctx, { method: 'DELETE', path: `${CLIENTS}/1` });
  sharedSecurityTests(ctx, { method: 'PUT', path: `${CLIENTS}/1`, json: { name: 'x' } });
  sharedSecurityTests(ctx, { method: 'GET', path: '/v1/management/unknown' });
});

describe('POST /v1/management/api-clients', () => {
  test('with generate_api_key true: 201, {api_key_id, api_client_entity_id, token}, token is <id>.<256-bit secret>', async () => {
    const res = await http(`${sidecar.url}${CLIENTS}`, {
      method: 'POST',
      headers: admin(),
      json: { name: uniqueName(), is_admin: false, generate_api_key: true },
    });
    expect(res.status).toBe(201);
    const body = res.json as { api_key_id: number; api_client_entity_id: number; token: string };
    expect(Object.keys(body).sort()).toEqual(['api_client_entity_id', 'api_key_id', 'token']);
    expect(body.api_client_entity_id).toBe(body.api_key_id);
    const [id, secret] = body.token.split('.');
    expect(Number(id)).toBe(body.api_key_id);
    expect(Buffer.from(secret!, 'base64url').length).toBeGreaterThanOrEqual(32);
    expect(res.headers['cache-control']).toBe('no-store');
  });

  test('with generate_api_key false: 201, {api_key_id, api_client_entity_id} only, and the record has no key', async () => {
    const res = await http(`${sidecar.url}${CLIENTS}`, {
      method: 'POST',
      headers: admin(),
      json: {
        name: uniqueName(),
        is_admin: true,
        generate_api_key: false,
        api_client_id: uniqueName('sub'),
      },
    });
    expect(res.status).toBe(201);
    const body = res.json as { api_key_id: number; api_client_entity_id: number };
    expect(body).toEqual({ api_key_id: body.api_key_id, api_client_entity_id: body.api_key_id });
    const record = await http(`${sidecar.url}${CLIENTS}/${body.api_key_id}`, { headers: admin() });
    expect(record.json).toMatchObject({ has_api_key: false, is_admin: true });
  });

  test('a unicode name is kept exactly', async () => {
    const name = `Zoë's 服务 ${uniqueName()} 🚀`;
    const { id } = await createClient(sidecar.url, sidecar.adminKey, {
      name,
      is_admin: false,
      generate_api_key: true,
    });
    const record = await http(`${sidecar.url}${CLIENTS}/${id}`, { headers: admin() });
    expect((record.json as { name: string }).name).toBe(name);
  });

  test('a duplicate name is 409 naming the field', async () => {
    const name = uniqueName();
    await createClient(sidecar.url, sidecar.adminKey, {
      name,
      is_admin: false,
      generate_api_key: true,
    });
    const res = await http(`${sidecar.url}${CLIENTS}`, {
      method: 'POST',
      headers: admin(),
      json: { name, is_admin: true, generate_api_key: true },
    });
    expect(res.status).toBe(409);
    expect(res.json).toEqual({
      errors: [expect.objectContaining({ code: 'CONFLICT', field: 'name' })],
    });
  });

  test('a duplicate api_client_id is 409 naming the field', async () => {
    const sub = uniqueName('sub');
    await createClient(sidecar.url, sidecar.adminKey, {
      name: uniqueName(),
      is_admin: false,
      generate_api_key: false,
      api_client_id: sub,
    });
    const res = await http(`${sidecar.url}${CLIENTS}`, {
      method: 'POST',
      headers: admin(),
      json: { name: uniqueName(), is_admin: false, generate_api_key: false, api_client_id: sub },
    });
    expect(res.status).toBe(409);
    expect(res.json).toEqual({
      errors: [expect.objectContaining({ code: 'CONFLICT', field: 'api_client_id' })],
    });
  });

  test('20 concurrent creations of one name: exactly one 201 and 19 × 409', async () => {
    const name = uniqueName('race');
    const results = await Promise.all(
      Array.from({ length: 20 }, () =>
        http(`${sidecar.url}${CLIENTS}`, {
          method: 'POST',
          headers: admin(),
          json: { name, is_admin: false, generate_api_key: true },
        }),
      ),
    );
    const statuses = results.map((r) => r.status).sort();
    expect(statuses.filter((s) => s === 201)).toHaveLength(1);
    expect(statuses.filter((s) => s === 409)).toHaveLength(19);
  });

  test('every validation error of a request is reported at once', async () => {
    const res = await http(`${sidecar.url}${CLIENTS}`, {
      method: 'POST',
      headers: admin(),
      json: { name: '', is_admin: 'yes', generate_api_key: false, colour: 'red' },
    });
    expect(res.status).toBe(400);
    const fields = (res.json as { errors: { field: string }[] }).errors.map((e) => e.field).sort();
    expect(fields).toEqual(['api_client_id', 'colour', 'is_admin', 'name']);
  });
});

describe('GET /v1/management/api-clients', () => {
  test('lists every client with and without the trailing slash, never a secret or hash', async () => {
    const { token } = await createClient(sidecar.url, sidecar.adminKey, {
      name: uniqueName(),
      is_admin: false,
      generate_api_key: true,
    });
    for (const path of [CLIENTS, `${CLIENTS}/`]) {
      const res = await http(`${sidecar.url}${path}`, { headers: admin() });
      expect(res.status).toBe(200);
      const body = res.json as {
        items: Record<string, unknown>[];
        response_metadata: { total: number; next_cursor: null; prev_cursor: null };
      };
      expect(body.items.length).toBe(body.response_metadata.total);
      expect(body.response_metadata.next_cursor).toBeNull();
      expect(body.response_metadata.prev_cursor).toBeNull();
      expect(Object.keys(body.items[0]!).sort()).toEqual([
        'api_client_id',
        'api_key_id',
        'created_at',
        'expires_at',
        'has_api_key',
        'id',
        'is_admin',
        'last_used_at',
        'name',
        'permissions',
        'previous_key_expires_at',
        'rate_limit',
      ]);
      expect(body.items[0]!.id).toBe(body.items[0]!.api_key_id);
      expect(res.text).not.toContain(token.split('.')[1]);
      expect(res.text).not.toMatch(/hash|secret|token/i);
    }
  });

  test('pages with limit and cursor cover every client exactly once, in id order', async () => {
    for (let i = 0; i < 7; i += 1) {
      await createClient(sidecar.url, sidecar.adminKey, {
        name: uniqueName('page'),
        is_admin: false,
        generate_api_key: true,
      });
    }
    const all = (await http(`${sidecar.url}${CLIENTS}`, { headers: admin() })).json as {
      items: { api_key_id: number }[];
    };
    const seen: number[] = [];
    let cursor: string | null = null;
    do {
      const query: string = cursor ? `?limit=3&cursor=${cursor}` : '?limit=3';
      const res = await http(`${sidecar.url}${CLIENTS}${query}`, { headers: admin() });
      expect(res.status).toBe(200);
      const page = res.json as {
        items: { api_key_id: number }[];
        response_metadata: { total: number; next_cursor: string | null };
      };
      expect(page.items.length).toBeLessThanOrEqual(3);
      expect(page.response_metadata.total).toBe(all.items.length);
      seen.push(...page.items.map((i) => i.api_key_id));
      cursor = page.response_metadata.next_cursor;
    } while (cursor);
    expect(seen).toEqual(all.items.map((i) => i.api_key_id));
  });
});

describe('GET and DELETE /v1/management/api-clients/<id>', () => {
  test('GET gives the record; DELETE answers 200 with it; then both are 404', async () => {
    const name = uniqueName();
    const { id } = await createClient(sidecar.url, sidecar.adminKey, {
      name,
      is_admin: false,
      generate_api_key: true,
    });
    const got = await http(`${sidecar.url}${CLIENTS}/${id}`, { headers: admin() });
    expect(got.status).toBe(200);
    expect(got.json).toMatchObject({
      id,
      api_key_id: id,
      name,
      is_admin: false,
      has_api_key: true,
      api_client_id: null,
    });
    const deleted = await http(`${sidecar.url}${CLIENTS}/${id}`, {
      method: 'DELETE',
      headers: admin(),
    });
    expect(deleted.status).toBe(200);
    expect(deleted.json).toEqual(got.json);
    for (const method of ['GET', 'DELETE']) {
      const again = await http(`${sidecar.url}${CLIENTS}/${id}`, { method, headers: admin() });
      expect(again.status).toBe(404);
      expect(again.json).toEqual({ errors: [expect.objectContaining({ code: 'NOT_FOUND' })] });
    }
  });

  test('a method a route does not serve is 405 with Allow', async () => {
    const res = await http(`${sidecar.url}${CLIENTS}/1`, {
      method: 'PATCH',
      headers: admin(),
      json: {},
    });
    expect(res.status).toBe(405);
    expect(res.headers.allow).toBe('GET, HEAD, PUT, DELETE');
  });
});
