import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { freshDatabase } from '../../support/database.js';
import { http } from '../../support/http.js';
import { CLIENTS, createClient, uniqueName } from '../../support/management.js';
import { apk, startTestSidecar, type TestSidecar } from '../../support/sidecar.js';

let sidecar: TestSidecar;
beforeAll(async () => {
  sidecar = await startTestSidecar(await freshDatabase());
});
afterAll(() => sidecar?.close());

const put = (id: number | string, json: unknown) =>
  http(`${sidecar.url}${CLIENTS}/${id}`, { method: 'PUT', headers: apk(sidecar.adminKey), json });

describe('PUT /v1/management/api-clients/<id>', () => {
  test('changes only the fields sent and answers 200 with the record, as GET then reads it', async () => {
    const name = uniqueName('put');
    const { id } = await createClient(sidecar.url, sidecar.adminKey, {
      name,
      is_admin: false,
      generate_api_key: true,
    });
    const renamed = await put(id, { name: `${name}-renamed` });
    expect(renamed.status).toBe(200);
    expect(renamed.json).toMatchObject({
      id,
      api_key_id: id,
      name: `${name}-renamed`,
      is_admin: false,
      api_client_id: null,
      has_api_key: true,
    });
    const promoted = await put(id, { is_admin: true, api_client_id: `${name}@idp` });
    expect(promoted.json).toMatchObject({ name: `${name}-renamed`, is_admin: true });
    expect((promoted.json as { api_client_id: string }).api_client_id).toBe(`${name}@idp`);
    const read = await http(`${sidecar.url}${CLIENTS}/${id}`, { headers: apk(sidecar.adminKey) });
    expect(read.json).toEqual(promoted.json);
  });

  test('the same 409 rules as create: a taken name or api_client_id', async () => {
    const a = uniqueName('a');
    const b = uniqueName('b');
    await createClient(sidecar.url, sidecar.adminKey, {
      name: a,
      is_admin: false,
      generate_api_key: false,
      api_client_id: `${a}@idp`,
    });
    const { id } = await createClient(sidecar.url, sidecar.adminKey, {
      name: b,
      is_admin: false,
      generate_api_key: true,
    });
    const name = await put(id, { name: a });
    expect(name.status).toBe(409);
    expect(name.json).toEqual({
      errors: [expect.objectContaining({ code: 'CONFLICT', field: 'name' })],
    });
    const subject = await put(id, { api_client_id: `${a}@idp` });
    expect(subject.status).toBe(409);
    expect(subject.json).toEqual({
      errors: [expect.objectContaining({ code: 'CONFLICT', field: 'api_client_id' })],
    });
  });

  test('the same validation as create, every problem at once; generate_api_key is not updatable', async () => {
    const { id } = await createClient(sidecar.url, sidecar.adminKey, {
      name: uniqueName(),
      is_admin: false,
      generate_api_key: true,
    });
    const bad = await put(id, {
      name: ' padded ',
      is_admin: 'yes',
      api_client_id: 'x'.repeat(1025),
      generate_api_key: true,
    });
    expect(bad.status).toBe(400);
    const fields = (bad.json as { errors: { field: string }[] }).errors.map((e) => e.field).sort();
    expect(fields).toEqual(['api_client_id', 'generate_api_key', 'is_admin', 'name']);
    const empty = await put(id, {});
    expect(empty.status).toBe(400);
    expect(empty.json).toEqual({ errors: [expect.objectContaining({ code: 'INVALID_BODY' })] });
  });

  test('a token-only client cannot lose its api_client_id; a client with a key can', async () => {
    const tokenOnly = await createClient(sidecar.url, sidecar.adminKey, {
      name: uniqueName('sub'),
      is_admin: false,
      generate_api_key: false,
      api_client_id: uniqueName('subject'),
    });
    const refused = await put(tokenOnly.id, { api_client_id: null });
    expect(refused.status).toBe(400);
    expect(refused.json).toEqual({
      errors: [expect.objectContaining({ code: 'MISSING_FIELD', field: 'api_client_id' })],
    });
    const keyed = await createClient(sidecar.url, sidecar.adminKey, {
      name: uniqueName('keyed'),
      is_admin: false,
      generate_api_key: true,
      api_client_id: uniqueName('subject'),
    });
    const cleared = await put(keyed.id, { api_client_id: null });
    expect(cleared.status).toBe(200);
    expect(cleared.json).toMatchObject({ api_client_id: null, has_api_key: true });
  });

  test('names and api_client_ids of 1024 characters are kept whole', async () => {
    const { id } = await createClient(sidecar.url, sidecar.adminKey, {
      name: 'n'.repeat(1024),
      is_admin: false,
      generate_api_key: true,
      api_client_id: 's'.repeat(1024),
    });
    const updated = await put(id, { name: `m${'n'.repeat(1023)}` });
    expect(updated.status).toBe(200);
    expect(updated.json).toMatchObject({
      name: `m${'n'.repeat(1023)}`,
      api_client_id: 's'.repeat(1024),
    });
  });

  test('an unknown id is 404; a malformed one 400; a non-JSON body 415', async () => {
    expect((await put(999_999, { name: 'x' })).status).toBe(404);
    expect((await put('abc', { name: 'x' })).status).toBe(400);
    const text = await http(`${sidecar.url}${CLIENTS}/1`, {
      method: 'PUT',
      headers: { ...apk(sidecar.adminKey), 'Content-Type': 'text/plain' },
      body: 'name=x',
    });
    expect(text.status).toBe(415);
  });
});
