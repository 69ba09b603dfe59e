import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { freshDatabase } from '../../support/database.js';
import { http } from '../../support/http.js';
import { CLIENTS, createClient, uniqueName } from '../../support/management.js';
import { apk, startTestSidecar, type TestSidecar } from '../../support/sidecar.js';

// The rate_limit field of an API client through the management API and PostgreSQL: stored,
// shown alike by GET, PUT and both listings, validated, audited. Enforcement is nginx's
// (test/e2e/rate-limits.test.ts).

let sidecar: TestSidecar;
beforeAll(async () => {
  sidecar = await startTestSidecar(await freshDatabase());
});
afterAll(() => sidecar?.close());

const admin = () => apk(sidecar.adminKey);
const get = (path: string) => http(`${sidecar.url}${path}`, { headers: admin() });
const put = (id: number, json: unknown) =>
  http(`${sidecar.url}${CLIENTS}/${id}`, { method: 'PUT', headers: admin(), json });

describe('rate_limit on an API client', () => {
  test('set on create, changed and removed by PUT, the same in GET and in both listings', async () => {
    const name = uniqueName('limited');
    const { id } = await createClient(sidecar.url, sidecar.adminKey, {
      name,
      is_admin: false,
      generate_api_key: true,
      rate_limit: { requests: 100, per_seconds: 1 },
    });
    const read = await get(`${CLIENTS}/${id}`);
    expect(read.json).toMatchObject({ id, rate_limit: { requests: 100, per_seconds: 1 } });
    // The streamed listing comes from the listing thread, the paged one from the main thread.
    const streamed = await get(CLIENTS);
    const paged = await get(`${CLIENTS}?limit=1000`);
    for (const listing of [streamed, paged]) {
      const items = (listing.json as { items: { id: number }[] }).items;
      expect(items.find((c) => c.id === id)).toEqual(read.json);
    }

    const changed = await put(id, { rate_limit: { requests: 5, per_seconds: 60 } });
    expect(changed.status).toBe(200);
    expect(changed.json).toMatchObject({ name, rate_limit: { requests: 5, per_seconds: 60 } });
    const removed = await put(id, { rate_limit: null });
    expect((removed.json as { rate_limit: unknown }).rate_limit).toBeNull();
    const none = await createClient(sidecar.url, sidecar.adminKey, {
      name: uniqueName('unlimited'),
      is_admin: false,
      generate_api_key: true,
    });
    expect((await get(`${CLIENTS}/${none.id}`)).json).toMatchObject({ rate_limit: null });
  });

  test('each change is audited with the limit it left', async () => {
    const { id } = await createClient(sidecar.url, sidecar.adminKey, {
      name: uniqueName('audited'),
      is_admin: false,
      generate_api_key: true,
    });
    await put(id, { rate_limit: { requests: 7, per_seconds: 10 } });
    const events = await get(`/v1/management/audit-events?target=${id}`);
    const [update, create] = (
      events.json as { items: { action: string; details: Record<string, unknown> }[] }
    ).items;
    expect(update).toMatchObject({
      action: 'api_client.update',
      details: { changed: ['rate_limit'], rate_limit: { requests: 7, per_seconds: 10 } },
    });
    expect(create).toMatchObject({ action: 'api_client.create', details: { rate_limit: null } });
  });

  test.each([
    ['zero requests', { requests: 0, per_seconds: 1 }],
    ['a fraction', { requests: 1.5, per_seconds: 1 }],
    ['more than a day', { requests: 10, per_seconds: 86_401 }],
    ['too many requests', { requests: 1_000_000_001, per_seconds: 1 }],
    ['a string', { requests: '10', per_seconds: 1 }],
    ['no window', { requests: 10 }],
    ['an unknown field', { requests: 10, per_seconds: 1, burst: 5 }],
    ['not an object', 100],
  ])('%s is a 400 in the one error shape, on create and on PUT', async (_, rateLimit) => {
    const created = await http(`${sidecar.url}${CLIENTS}`, {
      method: 'POST',
      headers: admin(),
      json: { name: uniqueName(), is_admin: false, generate_api_key: true, rate_limit: rateLimit },
    });
    expect(created.status).toBe(400);
    const errors = (created.json as { errors: { code: string; field?: string }[] }).errors;
    expect(errors.length).toBeGreaterThan(0);
    for (const e of errors) {
      expect(['INVALID_FIELD', 'MISSING_FIELD', 'UNKNOWN_FIELD']).toContain(e.code);
      expect(e.field?.startsWith('rate_limit') || e.field === 'burst').toBe(true);
    }
    const { id } = await createClient(sidecar.url, sidecar.adminKey, {
      name: uniqueName(),
      is_admin: false,
      generate_api_key: true,
    });
    const updated = await put(id, { rate_limit: rateLimit });
    expect(updated.status).toBe(400);
    expect((await get(`${CLIENTS}/${id}`)).json).toMatchObject({ rate_limit: null });
  });
});
