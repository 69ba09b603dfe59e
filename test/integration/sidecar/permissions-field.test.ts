import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { freshDatabase } from '../../support/database.js';
import { http } from '../../support/http.js';
import { CLIENTS, createClient, uniqueName } from '../../support/management.js';
import { apk, startTestSidecar, type TestSidecar } from '../../support/sidecar.js';

// The permissions field of an API client through the management API and PostgreSQL: stored,
// shown alike by GET, PUT and both listings, validated (each problem naming its rule),
// audited, and sent to nginx with the /auth answer. Enforcement is nginx's
// (test/e2e/permissions.test.ts).

let sidecar: TestSidecar;
beforeAll(async () => {
  sidecar = await startTestSidecar(await freshDatabase());
});
afterAll(() => sidecar?.close());

const admin = () => apk(sidecar.adminKey);
const get = (path: string) => http(`${sidecar.url}${path}`, { headers: admin() });
const put = (id: number, json: unknown) =>
  http(`${sidecar.url}${CLIENTS}/${id}`, { method: 'PUT', headers: admin(), json });
const post = (json: unknown) =>
  http(`${sidecar.url}${CLIENTS}`, { method: 'POST', headers: admin(), json });

const READ_ONLY = [{ methods: ['GET'], path: '/resources/**' }];

describe('permissions on an API client', () => {
  test('set on create, changed and removed by PUT, the same in GET and in both listings', async () => {
    const name = uniqueName('restricted');
    const { id } = await createClient(sidecar.url, sidecar.adminKey, {
      name,
      is_admin: false,
      generate_api_key: true,
      permissions: [{ methods: ['POST', 'GET'], path: '/jobs/*' }],
    });
    const read = await get(`${CLIENTS}/${id}`);
    // Stored with the methods in the gateway's order.
    expect(read.json).toMatchObject({
      id,
      permissions: [{ methods: ['GET', 'POST'], path: '/jobs/*' }],
    });
    const streamed = await get(CLIENTS);
    const paged = await get(`${CLIENTS}?limit=1000`);
    for (const listing of [streamed, paged]) {
      const items = (listing.json as { items: { id: number }[] }).items;
      expect(items.find((c) => c.id === id)).toEqual(read.json);
    }
    const changed = await put(id, { permissions: READ_ONLY });
    expect(changed.status).toBe(200);
    expect(changed.json).toMatchObject({ name, permissions: READ_ONLY });
    const nothing = await put(id, { permissions: [] });
    expect((nothing.json as { permissions: unknown }).permissions).toEqual([]);
    const everything = await put(id, { permissions: null });
    expect((everything.json as { permissions: unknown }).permissions).toBeNull();
    const plain = await createClient(sidecar.url, sidecar.adminKey, {
      name: uniqueName('plain'),
      is_admin: false,
      generate_api_key: true,
    });
    expect((await get(`${CLIENTS}/${plain.id}`)).json).toMatchObject({ permissions: null });
  });

  test('each change is audited with the rules it left', async () => {
    const { id } = await createClient(sidecar.url, sidecar.adminKey, {
      name: uniqueName('audited'),
      is_admin: false,
      generate_api_key: true,
    });
    await put(id, { permissions: READ_ONLY });
    const events = await get(`/v1/management/audit-events?target=${id}`);
    const [update, create] = (
      events.json as { items: { action: string; details: Record<string, unknown> }[] }
    ).items;
    expect(update).toMatchObject({
      action: 'api_client.update',
      details: { changed: ['permissions'], permissions: READ_ONLY },
    });
    expect(create).toMatchObject({ action: 'api_client.create', details: { permissions: null } });
  });

  test('the /auth answer carries them to nginx; a client without rules has no such header', async () => {
    const created = await post({
      name: uniqueName('authed'),
      is_admin: false,
      generate_api_key: true,
      permissions: READ_ONLY,
    });
    const { token } = created.json as { token: string };
    const auth = await http(`${sidecar.url}/auth`, { headers: { Authorization: `apk ${token}` } });
    expect(auth.status).toBe(204);
    expect(auth.headers['x-gateway-permissions']).toBe('1 03/resources/**');
    const adminAuth = await http(`${sidecar.url}/auth`, { headers: admin() });
    expect(adminAuth.headers['x-gateway-permissions']).toBeUndefined();
  });

  test.each([
    ['not a list', 'GET /x', 'permissions', 'must be a list of rules, or null'],
    ['a relative path', [{ methods: ['GET'], path: 'x' }], 'permissions[0].path', 'absolute'],
    [
      'a dot segment in the second rule',
      [
        { methods: ['GET'], path: '/ok' },
        { methods: ['GET'], path: '/a/../b' },
      ],
      'permissions[1].path',
      '. or ..',
    ],
    [
      'a wildcard inside a segment',
      [{ methods: ['GET'], path: '/a*' }],
      'permissions[0].path',
      '*',
    ],
    ['an unknown method', [{ methods: ['TRACE'], path: '/' }], 'permissions[0].methods', 'TRACE'],
    ['no method', [{ methods: [], path: '/' }], 'permissions[0].methods', 'at least one'],
    ['a third field', [{ methods: ['GET'], path: '/', x: 1 }], 'permissions[0].x', 'not a field'],
    ['101 rules', Array(101).fill({ methods: ['GET'], path: '/' }), 'permissions', 'at most 100'],
  ])(
    '%s is a 400 in the one error shape naming the rule, on create and on PUT',
    async (_, permissions, field, words) => {
      const created = await post({
        name: uniqueName(),
        is_admin: false,
        generate_api_key: true,
        permissions,
      });
      expect(created.status).toBe(400);
      const errors = (
        created.json as { errors: { code: string; field?: string; message: string }[] }
      ).errors;
      expect(errors).toHaveLength(1);
      expect(errors[0]?.code).toBe('INVALID_FIELD');
      expect(errors[0]?.field).toBe(field);
      if (words !== 'TRACE') expect(errors[0]?.message).toContain(words);
      expect(errors[0]?.message.startsWith(field)).toBe(true);
      const { id } = await createClient(sidecar.url, sidecar.adminKey, {
        name: uniqueName(),
        is_admin: false,
        generate_api_key: true,
      });
      const updated = await put(id, { permissions });
      expect(updated.status).toBe(400);
      expect((updated.json as { errors: { field?: string }[] }).errors[0]?.field).toBe(field);
      expect((await get(`${CLIENTS}/${id}`)).json).toMatchObject({ permissions: null });
    },
  );

  test('a bad rule is reported with every other problem of the body', async () => {
    const res = await post({
      name: '',
      is_admin: false,
      generate_api_key: true,
      permissions: [{ methods: ['GET'], path: '/a//b' }],
    });
    expect(res.status).toBe(400);
    const fields = (res.json as { errors: { field?: string }[] }).errors.map((e) => e.field);
    expect(fields.sort()).toEqual(['name', 'permissions[0].path']);
  });

  test('management still needs is_admin: a restricted non-admin key cannot change its own rules', async () => {
    const created = await post({
      name: uniqueName('self'),
      is_admin: false,
      generate_api_key: true,
      permissions: [{ methods: ['PUT'], path: '/**' }],
    });
    const { token, api_key_id: id } = created.json as { token: string; api_key_id: number };
    const res = await http(`${sidecar.url}${CLIENTS}/${id}`, {
      method: 'PUT',
      headers: { Authorization: `apk ${token}` },
      json: { permissions: null },
    });
    expect(res.status).toBe(403);
  });
});
