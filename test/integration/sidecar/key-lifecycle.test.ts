import pg from 'pg';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { freshDatabase } from '../../support/database.js';
import { http } from '../../support/http.js';
import { CLIENTS, createClient, uniqueName } from '../../support/management.js';
import { apk, movableClock, startTestSidecar, type TestSidecar } from '../../support/sidecar.js';

// Expiry, rotation and last use against a real sidecar and PostgreSQL, with the sidecar's
// clock frozen and moved by hand: no sleeping for a key to expire.

const clock = movableClock();
let sidecar: TestSidecar;
let db: pg.Client;

beforeAll(async () => {
  const url = await freshDatabase();
  sidecar = await startTestSidecar(url, { clock });
  db = new pg.Client({ connectionString: url });
  await db.connect();
});
afterAll(async () => {
  await sidecar?.close();
  await db?.end();
});

const admin = () => apk(sidecar.adminKey);
const auth = (token: string) => http(`${sidecar.url}/auth`, { headers: apk(token) });
const iso = (ms: number) => new Date(ms).toISOString();

async function rotate(id: number, body: unknown) {
  return http(`${sidecar.url}${CLIENTS}/${id}/rotate`, {
    method: 'POST',
    headers: admin(),
    json: body,
  });
}

describe('expires_at', () => {
  test('on create: kept in the record, refused after it with API_CLIENT_EXPIRED; decisions never outlive it', async () => {
    const expiresAt = clock() + 90_500;
    const { id, token } = await createClient(sidecar.url, sidecar.adminKey, {
      name: uniqueName('expiring'),
      is_admin: false,
      generate_api_key: true,
      expires_at: new Date(expiresAt).toISOString().replace('Z', '+00:00'),
    });
    const record = await http(`${sidecar.url}${CLIENTS}/${id}`, { headers: admin() });
    expect(record.json).toMatchObject({
      expires_at: iso(expiresAt),
      previous_key_expires_at: null,
    });

    const before = await auth(token);
    expect(before.status).toBe(204);
    // nginx keeps the "yes" until this second at the latest (rounded down: never past expiry).
    expect(before.headers['x-gateway-valid-until']).toBe(String(Math.floor(expiresAt / 1000)));

    clock.advance(90_500);
    const after = await auth(token);
    expect(after.status).toBe(401);
    expect(after.json).toEqual({
      errors: [{ code: 'API_CLIENT_EXPIRED', message: 'The API client has expired.' }],
    });
    // A wrong secret for the same client learns nothing about its state.
    const wrong = await auth(`${id}.${'A'.repeat(43)}`);
    expect((wrong.json as { errors: { code: string }[] }).errors[0]!.code).toBe('INVALID_API_KEY');
  });

  test('PUT sets, moves and clears it; null means never', async () => {
    const { id, token } = await createClient(sidecar.url, sidecar.adminKey, {
      name: uniqueName('put-expiry'),
      is_admin: false,
      generate_api_key: true,
    });
    expect((await auth(token)).headers['x-gateway-valid-until']).toBeUndefined();
    const soon = clock() + 10_000;
    const put = (expires_at: unknown) =>
      http(`${sidecar.url}${CLIENTS}/${id}`, {
        method: 'PUT',
        headers: admin(),
        json: { expires_at },
      });
    const set = await put(iso(soon));
    expect(set.status).toBe(200);
    expect(set.json).toMatchObject({ expires_at: iso(soon) });
    clock.advance(10_000);
    expect((await auth(token)).status).toBe(401);
    // Reviving an expired client: a new expiry in the future, or none.
    const cleared = await put(null);
    expect(cleared.json).toMatchObject({ expires_at: null });
    expect((await auth(token)).status).toBe(204);
  });

  test('refused input: not RFC 3339 with an offset, or not in the future; all errors at once', async () => {
    const bad = await http(`${sidecar.url}${CLIENTS}`, {
      method: 'POST',
      headers: admin(),
      json: {
        name: '',
        is_admin: false,
        generate_api_key: true,
        expires_at: iso(clock() - 1_000),
      },
    });
    expect(bad.status).toBe(400);
    expect((bad.json as { errors: { field: string }[] }).errors.map((e) => e.field).sort()).toEqual(
      ['expires_at', 'name'],
    );
    for (const expires_at of ['2099-01-01T00:00:00', '2099-01-01', 'tomorrow', 12, true]) {
      const res = await http(`${sidecar.url}${CLIENTS}`, {
        method: 'POST',
        headers: admin(),
        json: { name: uniqueName(), is_admin: false, generate_api_key: true, expires_at },
      });
      expect(res.status, String(expires_at)).toBe(400);
      expect(res.json).toEqual({
        errors: [
          {
            code: 'INVALID_FIELD',
            field: 'expires_at',
            message: 'expires_at must be an RFC 3339 time with an offset, or null.',
          },
        ],
      });
    }
  });
});

describe('rotation', () => {
  test('during the grace period both secrets pass; after it only the new one; the record says until when', async () => {
    const { id, token: old } = await createClient(sidecar.url, sidecar.adminKey, {
      name: uniqueName('rotating'),
      is_admin: false,
      generate_api_key: true,
    });
    const res = await rotate(id, { grace_period_seconds: 3600 });
    expect(res.status).toBe(200);
    const graceEnd = clock() + 3_600_000;
    const body = res.json as Record<string, unknown>;
    expect(body).toEqual({
      api_key_id: id,
      api_client_entity_id: id,
      token: expect.stringMatching(new RegExp(`^${id}\\.[A-Za-z0-9_-]{43}$`)),
      previous_key_expires_at: iso(graceEnd),
    });
    const fresh = body.token as string;
    expect(fresh).not.toBe(old);
    expect((await auth(fresh)).status).toBe(204);
    expect((await auth(fresh)).headers['x-gateway-valid-until']).toBeUndefined();
    const during = await auth(old);
    expect(during.status).toBe(204);
    // nginx may keep the old secret's "yes" no later than the grace period's end.
    expect(during.headers['x-gateway-valid-until']).toBe(String(Math.floor(graceEnd / 1000)));
    const record = await http(`${sidecar.url}${CLIENTS}/${id}`, { headers: admin() });
    expect(record.json).toMatchObject({ previous_key_expires_at: iso(graceEnd) });

    clock.advance(3_600_000);
    expect((await auth(old)).status).toBe(401);
    expect((await auth(fresh)).status).toBe(204);
    const after = await http(`${sidecar.url}${CLIENTS}/${id}`, { headers: admin() });
    expect(after.json).toMatchObject({ previous_key_expires_at: null });
  });

  test('grace 0 refuses the old secret at once; a second rotation during a grace drops the older one', async () => {
    const { id, token: first } = await createClient(sidecar.url, sidecar.adminKey, {
      name: uniqueName('rotate-now'),
      is_admin: false,
      generate_api_key: true,
    });
    const now = await rotate(id, { grace_period_seconds: 0 });
    expect(now.json).toMatchObject({ previous_key_expires_at: null });
    const second = (now.json as { token: string }).token;
    expect((await auth(first)).status).toBe(401);
    expect((await auth(second)).status).toBe(204);

    const graced = await rotate(id, { grace_period_seconds: 600 });
    const third = (graced.json as { token: string }).token;
    const again = await rotate(id, { grace_period_seconds: 600 });
    const fourth = (again.json as { token: string }).token;
    expect((await auth(second)).status).toBe(401);
    expect((await auth(third)).status).toBe(204);
    expect((await auth(fourth)).status).toBe(204);
  });

  test('an expired client stays refused with either secret', async () => {
    const { id, token } = await createClient(sidecar.url, sidecar.adminKey, {
      name: uniqueName('rotate-expired'),
      is_admin: false,
      generate_api_key: true,
      expires_at: iso(clock() + 5_000),
    });
    const fresh = ((await rotate(id, { grace_period_seconds: 60 })).json as { token: string })
      .token;
    clock.advance(5_000);
    for (const t of [token, fresh]) {
      expect(((await auth(t)).json as { errors: { code: string }[] }).errors[0]!.code).toBe(
        'API_CLIENT_EXPIRED',
      );
    }
  });

  test('404 for an unknown id, 409 NO_API_KEY for a token-only client, 400 for a bad grace period', async () => {
    expect((await rotate(999_999, { grace_period_seconds: 0 })).status).toBe(404);
    const tokenOnly = await createClient(sidecar.url, sidecar.adminKey, {
      name: uniqueName('token-only'),
      is_admin: false,
      generate_api_key: false,
      api_client_id: uniqueName('sub'),
    });
    const conflict = await rotate(tokenOnly.id, { grace_period_seconds: 0 });
    expect(conflict.status).toBe(409);
    expect((conflict.json as { errors: { code: string }[] }).errors[0]!.code).toBe('NO_API_KEY');
    for (const body of [
      {},
      { grace_period_seconds: -1 },
      { grace_period_seconds: 604_801 },
      { grace_period_seconds: 1.5 },
      { grace_period_seconds: '60' },
      { grace_period_seconds: 60, extra: 1 },
      [],
    ]) {
      const res = await rotate(tokenOnly.id, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
    }
    const max = await rotate(tokenOnly.id, { grace_period_seconds: 604_800 });
    expect(max.status).toBe(409);
    const method = await http(`${sidecar.url}${CLIENTS}/${tokenOnly.id}/rotate`, {
      headers: admin(),
    });
    expect(method.status).toBe(405);
  });
});

describe('last_used_at', () => {
  test('10,000 requests of one client write it once; a minute later, once more', async () => {
    const { id, token } = await createClient(sidecar.url, sidecar.adminKey, {
      name: uniqueName('busy'),
      is_admin: false,
      generate_api_key: true,
    });
    // Counts every write of last_used_at to this client, whichever statement makes it.
    await db.query(`CREATE TABLE IF NOT EXISTS last_used_writes (id bigint, at timestamptz)`);
    await db.query(`CREATE OR REPLACE FUNCTION count_last_used() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN INSERT INTO last_used_writes VALUES (NEW.id, NEW.last_used_at); RETURN NULL; END $$`);
    await db.query(`CREATE OR REPLACE TRIGGER count_last_used AFTER UPDATE OF last_used_at
      ON api_clients FOR EACH ROW EXECUTE FUNCTION count_last_used()`);
    const writes = async () =>
      (
        await db.query<{ n: number }>(
          'SELECT count(*)::int AS n FROM last_used_writes WHERE id = $1',
          [id],
        )
      ).rows[0]!.n;

    const before = await http(`${sidecar.url}${CLIENTS}/${id}`, { headers: admin() });
    expect(before.json).toMatchObject({ last_used_at: null });
    let refused = 0;
    for (let round = 0; round < 200; round += 1) {
      const answers = await Promise.all(Array.from({ length: 50 }, () => auth(token)));
      refused += answers.filter((a) => a.status !== 204).length;
    }
    expect(refused).toBe(0);
    await waitFor(async () => (await writes()) >= 1);
    expect(await writes()).toBe(1);
    const seen = await http(`${sidecar.url}${CLIENTS}/${id}`, { headers: admin() });
    expect((seen.json as { last_used_at: string }).last_used_at).toBe(iso(clock()));

    clock.advance(61_000);
    for (let i = 0; i < 20; i += 1) expect((await auth(token)).status).toBe(204);
    await waitFor(async () => (await writes()) >= 2);
    expect(await writes()).toBe(2);
    const later = await http(`${sidecar.url}${CLIENTS}/${id}`, { headers: admin() });
    expect((later.json as { last_used_at: string }).last_used_at).toBe(iso(clock()));
  }, 120_000);
});

/** Polls a condition written by the sidecar after it answered (off the /auth path). */
async function waitFor(condition: () => Promise<boolean>, timeoutMs = 5_000): Promise<void> {
  const started = Date.now();
  while (!(await condition())) {
    if (Date.now() - started > timeoutMs) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}
