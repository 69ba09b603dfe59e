import pg from 'pg';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { migrate } from '../../../sidecar/db/migrate.js';
import { silentLogger } from '../../../sidecar/log.js';
import { SettingsStore } from '../../../sidecar/settings/settings-store.js';
import { freshDatabase } from '../../support/database.js';
import { http } from '../../support/http.js';
import { CLIENTS, createClient } from '../../support/management.js';
import { sharedSecurityTests } from '../../support/shared-security.js';
import { apk, startTestSidecar, type TestSidecar } from '../../support/sidecar.js';

const SETTINGS = '/v1/management/settings';
let sidecar: TestSidecar;
let databaseUrl: string;
let userKey: string;
let deletedKey: string;

beforeAll(async () => {
  databaseUrl = await freshDatabase();
  sidecar = await startTestSidecar(databaseUrl);
  const user = { is_admin: false, generate_api_key: true };
  userKey = (await createClient(sidecar.url, sidecar.adminKey, { ...user, name: 'user' })).token;
  const doomed = await createClient(sidecar.url, sidecar.adminKey, { ...user, name: 'doomed' });
  deletedKey = doomed.token;
  await http(`${sidecar.url}${CLIENTS}/${doomed.id}`, {
    method: 'DELETE',
    headers: apk(sidecar.adminKey),
  });
});
afterAll(() => sidecar?.close());

const put = (body: unknown, raw?: string) =>
  http(`${sidecar.url}${SETTINGS}`, {
    method: 'PUT',
    headers: { ...apk(sidecar.adminKey), 'Content-Type': 'application/json' },
    body: raw ?? JSON.stringify(body),
  });

describe('GET and PUT /v1/management/settings', () => {
  test('off by default; a PUT turns the lock on and off, and GET says so', async () => {
    const read = () => http(`${sidecar.url}${SETTINGS}`, { headers: apk(sidecar.adminKey) });
    const first = await read();
    expect(first.status).toBe(200);
    expect(first.json).toEqual({ bootstrap_locked: false });
    expect(first.headers['cache-control']).toBe('no-store');
    for (const locked of [true, true, false]) {
      const res = await put({ bootstrap_locked: locked });
      expect(res.status, res.text).toBe(200);
      expect(res.json).toEqual({ bootstrap_locked: locked });
      expect((await read()).json).toEqual({ bootstrap_locked: locked });
    }
  });

  test.each([
    ['{}', {}, [{ code: 'MISSING_FIELD', field: 'bootstrap_locked' }]],
    [
      'an unknown field beside a good one',
      { bootstrap_locked: true, locked: true },
      [{ code: 'UNKNOWN_FIELD', field: 'locked' }],
    ],
    [
      'only an unknown field (both problems at once)',
      { locked: true },
      [
        { code: 'MISSING_FIELD', field: 'bootstrap_locked' },
        { code: 'UNKNOWN_FIELD', field: 'locked' },
      ],
    ],
    [
      'a string',
      { bootstrap_locked: 'true' },
      [{ code: 'INVALID_FIELD', field: 'bootstrap_locked' }],
    ],
    ['a number', { bootstrap_locked: 1 }, [{ code: 'INVALID_FIELD', field: 'bootstrap_locked' }]],
    ['null', { bootstrap_locked: null }, [{ code: 'INVALID_FIELD', field: 'bootstrap_locked' }]],
    ['an array body', [true], [{ code: 'INVALID_BODY' }]],
    ['a JSON null body', null, [{ code: 'INVALID_BODY' }]],
  ])('%s is a 400 in the one error shape, and nothing changes', async (_what, body, errors) => {
    const res = await put(body);
    expect(res.status, res.text).toBe(400);
    expect(res.json).toEqual({
      errors: errors.map((e) => expect.objectContaining({ ...e, message: expect.any(String) })),
    });
    const after = await http(`${sidecar.url}${SETTINGS}`, { headers: apk(sidecar.adminKey) });
    expect(after.json).toEqual({ bootstrap_locked: false });
  });

  test('broken JSON is INVALID_JSON; another method is 405 with Allow', async () => {
    const broken = await put(undefined, '{"bootstrap_locked": tru');
    expect(broken.status).toBe(400);
    expect(broken.json).toEqual({ errors: [expect.objectContaining({ code: 'INVALID_JSON' })] });
    const patch = await http(`${sidecar.url}${SETTINGS}`, {
      method: 'PATCH',
      headers: apk(sidecar.adminKey),
      json: { bootstrap_locked: true },
    });
    expect(patch.status).toBe(405);
    expect(patch.headers.allow).toBe('GET, HEAD, PUT');
  });

  test('each change commits with its audit event (settings.update, the admin as actor); one whose event cannot be written is not made', async () => {
    const db = new pg.Client({ connectionString: databaseUrl });
    await db.connect();
    const adminId = Number(sidecar.adminKey.split('.')[0]);
    const putAs = (locked: boolean, requestId: string) =>
      http(`${sidecar.url}${SETTINGS}`, {
        method: 'PUT',
        headers: { ...apk(sidecar.adminKey), 'X-Request-Id': requestId },
        json: { bootstrap_locked: locked },
      });
    try {
      expect((await putAs(true, '5e7700000000000000000000000000a1')).status).toBe(200);
      expect((await putAs(false, '5e7700000000000000000000000000a0')).status).toBe(200);
      const { rows } = await db.query(
        `SELECT e.action, e.outcome, e.actor_id, e.actor_name = c.name AS actor_named,
                e.actor_auth_method, e.target_id, e.request_id, e.details
         FROM audit_events e JOIN api_clients c ON c.id = e.actor_id
         WHERE e.request_id LIKE '5e77%' ORDER BY e.id`,
      );
      expect(rows).toEqual(
        [true, false].map((locked) => ({
          action: 'settings.update',
          outcome: 'success',
          actor_id: adminId,
          actor_named: true,
          actor_auth_method: 'api_key',
          target_id: null,
          request_id: `5e7700000000000000000000000000a${locked ? 1 : 0}`,
          details: { before: { bootstrap_locked: !locked }, after: { bootstrap_locked: locked } },
        })),
      );

      // The audit insert fails: the PUT fails and the lock stays as it was.
      await db.query(
        `ALTER TABLE audit_events ADD CONSTRAINT test_refuse_settings CHECK (action <> 'settings.update') NOT VALID`,
      );
      try {
        const refused = await putAs(true, 'settings-audit-refused');
        expect(refused.status).toBe(500);
        expect(refused.json).toEqual({
          errors: [expect.objectContaining({ code: expect.any(String) })],
        });
      } finally {
        await db.query('ALTER TABLE audit_events DROP CONSTRAINT test_refuse_settings');
      }
      const after = await http(`${sidecar.url}${SETTINGS}`, { headers: apk(sidecar.adminKey) });
      expect(after.json).toEqual({ bootstrap_locked: false });
    } finally {
      await db.end();
    }
  });

  const ctx = () => ({ baseUrl: sidecar.url, adminKey: sidecar.adminKey, userKey, deletedKey });
  sharedSecurityTests(ctx, { method: 'GET', path: SETTINGS });
  sharedSecurityTests(ctx, { method: 'PUT', path: SETTINGS, json: { bootstrap_locked: true } });
});

describe('SettingsStore.update: the change hook runs in the change transaction', () => {
  let pool: pg.Pool;
  beforeAll(async () => {
    pool = new pg.Pool({ connectionString: await freshDatabase(), max: 2 });
    await migrate(pool, silentLogger);
    await pool.query('CREATE TABLE hook_log (before boolean, after boolean)');
  });
  afterAll(() => pool?.end());

  test('what the hook writes commits with the change', async () => {
    const store = new SettingsStore(pool);
    const change = await store.update({ bootstrapLocked: true }, async (tx, c) => {
      await tx.query('INSERT INTO hook_log VALUES ($1, $2)', [
        c.before.bootstrapLocked,
        c.after.bootstrapLocked,
      ]);
    });
    expect(change).toEqual({
      before: { bootstrapLocked: false },
      after: { bootstrapLocked: true },
    });
    expect((await pool.query('SELECT * FROM hook_log')).rows).toEqual([
      { before: false, after: true },
    ]);
    expect(await store.read()).toEqual({ bootstrapLocked: true });
  });

  test('a hook that fails takes the change back with it', async () => {
    const store = new SettingsStore(pool);
    await expect(
      store.update({ bootstrapLocked: false }, async (tx) => {
        await tx.query('INSERT INTO hook_log VALUES (true, false)');
        throw new Error('audit store down');
      }),
    ).rejects.toThrow('audit store down');
    expect(await store.read()).toEqual({ bootstrapLocked: true });
    expect((await pool.query('SELECT count(*)::int AS n FROM hook_log')).rows[0].n).toBe(1);
  });
});
