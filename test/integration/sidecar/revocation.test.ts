import { afterAll, beforeAll, expect, test } from 'vitest';
import { freshDatabase } from '../../support/database.js';
import { http } from '../../support/http.js';
import { CLIENTS, createClient, uniqueName } from '../../support/management.js';
import { apk, startTestSidecar, type TestSidecar } from '../../support/sidecar.js';

let a: TestSidecar;
let b: TestSidecar;

beforeAll(async () => {
  const db = await freshDatabase();
  a = await startTestSidecar(db);
  b = await startTestSidecar(db, { bootstrap: false });
});
afterAll(async () => {
  await a?.close();
  await b?.close();
});

test('a key deleted through one sidecar is refused at once by a second sidecar (warm caches, 25 rounds)', async () => {
  for (let round = 0; round < 25; round += 1) {
    const { id, token } = await createClient(a.url, a.adminKey, {
      name: uniqueName('revoke'),
      is_admin: false,
      generate_api_key: true,
    });
    // Warm both sidecars' caches with the key.
    for (const s of [a, b, a, b])
      expect((await http(`${s.url}/auth`, { headers: apk(token) })).status).toBe(204);
    const deleted = await http(`${a.url}${CLIENTS}/${id}`, {
      method: 'DELETE',
      headers: apk(a.adminKey),
    });
    expect(deleted.status).toBe(200);
    // The very next request, on the other sidecar, immediately after DELETE answered.
    const onB = await http(`${b.url}/auth`, { headers: apk(token) });
    expect(onB.status, `round ${round}`).toBe(401);
    const onA = await http(`${a.url}/auth`, { headers: apk(token) });
    expect(onA.status).toBe(401);
  }
});

test('is_admin changed by PUT through one sidecar decides the next request on a second sidecar (25 rounds)', async () => {
  const onManagement = { 'X-Original-URI': '/v1/management/api-clients' };
  for (let round = 0; round < 25; round += 1) {
    const { id, token } = await createClient(a.url, a.adminKey, {
      name: uniqueName('demote'),
      is_admin: true,
      generate_api_key: true,
    });
    for (const s of [a, b, a, b]) {
      const warm = await http(`${s.url}/auth`, { headers: { ...apk(token), ...onManagement } });
      expect(warm.status).toBe(204);
      expect(warm.headers['x-client-is-admin']).toBe('true');
    }
    const demoted = await http(`${a.url}${CLIENTS}/${id}`, {
      method: 'PUT',
      headers: apk(a.adminKey),
      json: { is_admin: false },
    });
    expect(demoted.status).toBe(200);
    const onB = await http(`${b.url}/auth`, { headers: { ...apk(token), ...onManagement } });
    expect(onB.status, `round ${round}`).toBe(403);
    const elsewhere = await http(`${b.url}/auth`, { headers: apk(token) });
    expect(elsewhere.status).toBe(204);
    expect(elsewhere.headers['x-client-is-admin']).toBe('false');
    // And the management API itself (which re-checks the credential) refuses it on B.
    const direct = await http(`${b.url}${CLIENTS}`, { headers: apk(token) });
    expect(direct.status).toBe(403);
  }
});

test('an unknown key is never served from a cache, even right after it was created elsewhere', async () => {
  // The id that the next client will get is unknown until it exists: ask for it first.
  const probe = await createClient(a.url, a.adminKey, {
    name: uniqueName(),
    is_admin: false,
    generate_api_key: true,
  });
  const nextId = probe.id + 1;
  const guess = `${nextId}.${'A'.repeat(43)}`;
  expect((await http(`${b.url}/auth`, { headers: apk(guess) })).status).toBe(401);
  const real = await createClient(a.url, a.adminKey, {
    name: uniqueName(),
    is_admin: false,
    generate_api_key: true,
  });
  expect(real.id).toBe(nextId);
  // The real key passes on B at once; the guessed secret for the same id still fails.
  expect((await http(`${b.url}/auth`, { headers: apk(real.token) })).status).toBe(204);
  expect((await http(`${b.url}/auth`, { headers: apk(guess) })).status).toBe(401);
});
