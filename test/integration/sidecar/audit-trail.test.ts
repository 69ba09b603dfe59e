import pg from 'pg';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { AuditEventRecord as Event } from '../../../sidecar/audit/audit-reader.js';
import { freshDatabase } from '../../support/database.js';
import { http } from '../../support/http.js';
import { CLIENTS, createClient, uniqueName } from '../../support/management.js';
import { apk, capturingLogger, startTestSidecar, type TestSidecar } from '../../support/sidecar.js';

// The audit trail against a real sidecar and PostgreSQL: one row per action with its actor,
// request id and address, failures too; the change and its row commit together; no secret.

const EVENTS = '/v1/management/audit-events';
const FAILURES = '/v1/management/auth-failures';
const log = capturingLogger();
let sidecar: TestSidecar;
let db: pg.Client;
let adminId: number;
/** Every token this file sees issued, to look for afterwards. */
const issued: string[] = [];

beforeAll(async () => {
  const url = await freshDatabase();
  sidecar = await startTestSidecar(url, { log, failureFlushMs: 100 });
  adminId = Number(sidecar.adminKey.split('.')[0]);
  issued.push(sidecar.adminKey);
  db = new pg.Client({ connectionString: url });
  await db.connect();
});
afterAll(async () => {
  await sidecar?.close();
  await db?.end();
});

const asAdmin = (extra: Record<string, string> = {}) => ({
  ...apk(sidecar.adminKey),
  'X-Forwarded-For': '203.0.113.7',
  ...extra,
});

async function events(query = ''): Promise<{ items: Event[]; next: string | null }> {
  const res = await http(`${sidecar.url}${EVENTS}${query}`, { headers: apk(sidecar.adminKey) });
  expect(res.status, res.text).toBe(200);
  const body = res.json as { items: Event[]; response_metadata: { next_cursor: string | null } };
  return { items: body.items, next: body.response_metadata.next_cursor };
}

describe('audit events', () => {
  test('the bootstrap key is recorded with actor bootstrap', async () => {
    const { items } = await events('?action=bootstrap_key.issue');
    expect(items).toHaveLength(1);
    expect(items[0]).toMatchObject({
      action: 'bootstrap_key.issue',
      outcome: 'success',
      actor: { api_key_id: null, name: null, auth_method: 'bootstrap' },
      target_id: adminId,
      target_name: expect.stringMatching(/^bootstrap-/),
      request_id: null,
    });
  });

  test('create, update, rotate, delete: one row each, newest first, with actor, request id and address', async () => {
    const name = uniqueName('audited');
    const created = await http(`${sidecar.url}${CLIENTS}`, {
      method: 'POST',
      headers: asAdmin({ 'X-Request-Id': '11111111111111111111111111111111' }),
      json: { name, is_admin: false, generate_api_key: true },
    });
    expect(created.status).toBe(201);
    const { api_key_id: id, token } = created.json as { api_key_id: number; token: string };
    issued.push(token);
    const put = await http(`${sidecar.url}${CLIENTS}/${id}`, {
      method: 'PUT',
      headers: asAdmin({ 'X-Request-Id': '22222222222222222222222222222222' }),
      json: { is_admin: true },
    });
    expect(put.status).toBe(200);
    const rotated = await http(`${sidecar.url}${CLIENTS}/${id}/rotate`, {
      method: 'POST',
      headers: asAdmin({ 'X-Request-Id': '33333333333333333333333333333333' }),
      json: { grace_period_seconds: 30 },
    });
    expect(rotated.status).toBe(200);
    issued.push((rotated.json as { token: string }).token);
    const deleted = await http(`${sidecar.url}${CLIENTS}/${id}`, {
      method: 'DELETE',
      headers: asAdmin({ 'X-Request-Id': '44444444444444444444444444444444' }),
    });
    expect(deleted.status).toBe(200);

    const { items } = await events(`?target=${id}`);
    expect(items.map((e) => e.action)).toEqual([
      'api_client.delete',
      'api_client.rotate',
      'api_client.update',
      'api_client.create',
    ]);
    const actor = {
      api_key_id: adminId,
      name: expect.stringMatching(/^bootstrap-/),
      auth_method: 'api_key',
    };
    for (const [event, requestId] of items.map(
      (e, i) =>
        [
          e,
          [
            '44444444444444444444444444444444',
            '33333333333333333333333333333333',
            '22222222222222222222222222222222',
            '11111111111111111111111111111111',
          ][i],
        ] as const,
    )) {
      expect(event).toMatchObject({
        outcome: 'success',
        actor,
        target_id: id,
        request_id: requestId,
        source_address: '203.0.113.7',
      });
      expect(Date.parse(event.time)).toBeGreaterThan(Date.now() - 60_000);
    }
    expect(items[3]!.details).toMatchObject({ name, is_admin: false, has_api_key: true });
    expect(items[2]!.details).toMatchObject({ changed: ['is_admin'], is_admin: true });
    expect(items[1]!.details).toMatchObject({ grace_period_seconds: 30 });
    // The deleted client's events still name it: the name was written with each event.
    expect(items.map((e) => e.target_name)).toEqual([name, name, name, name]);
  });

  test("each event keeps the target's name of its time: a rename and a delete change no older event", async () => {
    const before = uniqueName('renamed-from');
    const after = uniqueName('renamed-to');
    const { id, token } = await createClient(sidecar.url, sidecar.adminKey, {
      name: before,
      is_admin: false,
      generate_api_key: true,
    });
    issued.push(token);
    const put = await http(`${sidecar.url}${CLIENTS}/${id}`, {
      method: 'PUT',
      headers: asAdmin(),
      json: { name: after },
    });
    expect(put.status).toBe(200);
    // Refused: the event names the client as it stands (409), or nothing once it is gone (404).
    const otherName = uniqueName('renamed-other');
    const other = await createClient(sidecar.url, sidecar.adminKey, {
      name: otherName,
      is_admin: false,
      generate_api_key: true,
    });
    issued.push(other.token);
    const taken = await http(`${sidecar.url}${CLIENTS}/${id}`, {
      method: 'PUT',
      headers: asAdmin(),
      json: { name: otherName },
    });
    expect(taken.status).toBe(409);
    const deleted = await http(`${sidecar.url}${CLIENTS}/${id}`, {
      method: 'DELETE',
      headers: asAdmin(),
    });
    expect(deleted.status).toBe(200);
    const again = await http(`${sidecar.url}${CLIENTS}/${id}`, {
      method: 'DELETE',
      headers: asAdmin(),
    });
    expect(again.status).toBe(404);
    const { items } = await events(`?target=${id}`);
    expect(items.map((e) => [e.action, e.outcome, e.target_name])).toEqual([
      ['api_client.delete', 'failure', null],
      ['api_client.delete', 'success', after],
      ['api_client.update', 'failure', after],
      ['api_client.update', 'success', after],
      ['api_client.create', 'success', before],
    ]);
  });

  test('an event recorded before names were kept (migration 0012) has target_name null', async () => {
    const { id, token } = await createClient(sidecar.url, sidecar.adminKey, {
      name: uniqueName('unnamed-before'),
      is_admin: false,
      generate_api_key: true,
    });
    issued.push(token);
    await db.query('UPDATE audit_events SET target_name = NULL WHERE target_id = $1', [id]);
    const { items } = await events(`?target=${id}`);
    expect(items).toHaveLength(1);
    expect(items[0]).toMatchObject({ target_id: id, target_name: null });
  });

  test('refused changes are recorded as failures: 404 and 409', async () => {
    const name = uniqueName('taken');
    await createClient(sidecar.url, sidecar.adminKey, {
      name,
      is_admin: false,
      generate_api_key: true,
    }).then((c) => issued.push(c.token));
    const clash = await http(`${sidecar.url}${CLIENTS}`, {
      method: 'POST',
      headers: asAdmin(),
      json: { name, is_admin: false, generate_api_key: true },
    });
    expect(clash.status).toBe(409);
    const missing = await http(`${sidecar.url}${CLIENTS}/987654`, {
      method: 'DELETE',
      headers: asAdmin(),
    });
    expect(missing.status).toBe(404);
    const { items } = await events('?limit=2');
    expect(items.map((e) => [e.action, e.outcome, e.target_id])).toEqual([
      ['api_client.delete', 'failure', 987654],
      ['api_client.create', 'failure', null],
    ]);
    expect(items.map((e) => e.target_name)).toEqual([null, null]);
    expect(items[0]!.details).toEqual({ status: 404 });
    expect(items[1]!.details).toMatchObject({ status: 409, conflict: 'name' });
  });

  test('a change whose audit row cannot be written is not made', async () => {
    await db.query(
      `ALTER TABLE audit_events ADD CONSTRAINT test_refuse_create CHECK (action <> 'api_client.create' OR outcome <> 'success') NOT VALID`,
    );
    try {
      const name = uniqueName('unaudited');
      const res = await http(`${sidecar.url}${CLIENTS}`, {
        method: 'POST',
        headers: asAdmin(),
        json: { name, is_admin: false, generate_api_key: true },
      });
      expect(res.status).toBe(500);
      const { rows } = await db.query('SELECT 1 FROM api_clients WHERE name = $1', [name]);
      expect(rows).toHaveLength(0);
    } finally {
      await db.query('ALTER TABLE audit_events DROP CONSTRAINT test_refuse_create');
    }
  });

  test('filters and cursor pages: every event once, newest first', async () => {
    const all = await events('?limit=1000');
    expect(all.items.length).toBeGreaterThanOrEqual(8);
    const ids = all.items.map((e) => e.id);
    expect([...ids].sort((a, b) => b - a)).toEqual(ids);
    const paged: number[] = [];
    let query = '?limit=3';
    for (;;) {
      const page = await events(query);
      paged.push(...page.items.map((e) => e.id));
      if (!page.next) break;
      query = `?limit=3&cursor=${page.next}`;
    }
    expect(paged).toEqual(ids);
    const byActor = await events(`?actor=${adminId}&action=api_client.create`);
    expect(byActor.items.length).toBeGreaterThan(0);
    expect(
      byActor.items.every(
        (e) => e.actor.api_key_id === adminId && e.action === 'api_client.create',
      ),
    ).toBe(true);
    const future = await events(
      `?since=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}`,
    );
    expect(future.items).toEqual([]);
    const past = await events(`?until=2000-01-01T00:00:00Z`);
    expect(past.items).toEqual([]);
  });

  test('since and until include an event listed at exactly that time (PostgreSQL keeps microseconds)', async () => {
    const created = await createClient(sidecar.url, sidecar.adminKey, {
      name: uniqueName('timed'),
      is_admin: false,
      generate_api_key: true,
    });
    issued.push(created.token);
    const { rows } = await db.query<{ id: number }>(
      `UPDATE audit_events SET time = '2020-02-02T10:00:00.123456Z'
       WHERE action = 'api_client.create' AND target_id = $1 RETURNING id`,
      [created.id],
    );
    const id = Number(rows[0]?.id);
    const listed = '2020-02-02T10:00:00.123Z';
    const found = async (query: string) =>
      (await events(query)).items.filter((e) => e.id === id).map((e) => e.time);
    expect(await found(`?target=${created.id}`)).toEqual([listed]);
    const at = (t: string) => encodeURIComponent(t);
    expect(await found(`?until=${at(listed)}`)).toEqual([listed]);
    expect(await found(`?since=${at(listed)}`)).toEqual([listed]);
    expect(await found(`?since=${at(listed)}&until=${at(listed)}`)).toEqual([listed]);
    // The same instant written with another offset, and bounds with digits past the millisecond.
    expect(await found(`?until=${at('2020-02-02T11:00:00.123+01:00')}`)).toEqual([listed]);
    expect(await found(`?until=${at('2020-02-02T10:00:00.1239Z')}`)).toEqual([listed]);
    expect(await found(`?since=${at('2020-02-02T10:00:00.1230Z')}`)).toEqual([listed]);
    // One millisecond either side leaves it out; so does a since past its listed time.
    expect(await found(`?until=${at('2020-02-02T10:00:00.122Z')}`)).toEqual([]);
    expect(await found(`?since=${at('2020-02-02T10:00:00.124Z')}`)).toEqual([]);
    expect(await found(`?since=${at('2020-02-02T10:00:00.1231Z')}`)).toEqual([]);
  });

  test('bad queries: 400 with every problem at once', async () => {
    const res = await http(
      `${sidecar.url}${EVENTS}?limit=0&action=nope&actor=x&since=yesterday&cursor=zz&color=red`,
      { headers: apk(sidecar.adminKey) },
    );
    expect(res.status).toBe(400);
    expect((res.json as { errors: { field: string }[] }).errors.map((e) => e.field).sort()).toEqual(
      ['action', 'actor', 'color', 'cursor', 'limit', 'since'],
    );
    const post = await http(`${sidecar.url}${EVENTS}`, {
      method: 'POST',
      headers: apk(sidecar.adminKey),
      json: {},
    });
    expect(post.status).toBe(405);
  });
});

describe('failed authentications', () => {
  test('counted per client, reason and minute; listed; one log line each', async () => {
    const victim = await createClient(sidecar.url, sidecar.adminKey, {
      name: uniqueName('victim'),
      is_admin: false,
      generate_api_key: true,
    });
    issued.push(victim.token);
    const wrong = `${victim.id}.${'B'.repeat(43)}`;
    for (let i = 0; i < 30; i += 1) {
      expect((await http(`${sidecar.url}/auth`, { headers: apk(wrong) })).status).toBe(401);
    }
    for (let i = 0; i < 5; i += 1) {
      expect(
        (await http(`${sidecar.url}/auth`, { headers: apk(`99999${i}.${'C'.repeat(43)}`) })).status,
      ).toBe(401);
      expect((await http(`${sidecar.url}/auth`)).status).toBe(401);
    }
    let items: {
      api_key_id: number | null;
      reason: string;
      count: number;
      window_start: string;
    }[] = [];
    const total = (id: number | null, reason: string) =>
      items
        .filter((i) => i.api_key_id === id && i.reason === reason)
        .reduce((n, i) => n + i.count, 0);
    // The counts arrive with the sidecar's next flushes (every 100 ms here).
    const started = Date.now();
    for (;;) {
      const res = await http(`${sidecar.url}${FAILURES}`, { headers: apk(sidecar.adminKey) });
      items = (res.json as { items: typeof items }).items;
      const arrived =
        total(victim.id, 'INVALID_API_KEY') >= 30 &&
        total(null, 'INVALID_API_KEY') >= 5 &&
        total(null, 'MISSING_CREDENTIALS') >= 5;
      if (arrived || Date.now() - started > 5_000) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(total(victim.id, 'INVALID_API_KEY')).toBe(30);
    // Ids that name no client count under none: a guesser cannot add a row per id.
    expect(total(null, 'INVALID_API_KEY')).toBe(5);
    expect(total(null, 'MISSING_CREDENTIALS')).toBeGreaterThanOrEqual(5);
    for (const item of items) expect(item.window_start).toMatch(/:00\.000Z$/);
    const lines = log.lines.filter(
      (l) => l.includes('"authentication refused"') && l.includes(`"api_key_id":${victim.id},`),
    );
    // One line per (client, reason, minute); 30 refusals may straddle a minute.
    expect(lines.length).toBeGreaterThanOrEqual(1);
    expect(lines.length).toBeLessThanOrEqual(2);
  });
});

describe('no secret anywhere', () => {
  test('the audit table, the failure table and the sidecar log hold no token, secret or hash', async () => {
    expect(issued.length).toBeGreaterThanOrEqual(4);
    const { rows } = await db.query<{ text: string }>(
      `SELECT coalesce(string_agg(row_to_json(a)::text, E'\\n'), '') AS text FROM audit_events a
       UNION ALL
       SELECT coalesce(string_agg(row_to_json(f)::text, E'\\n'), '') FROM auth_failures f`,
    );
    const stored = rows.map((r) => r.text).join('\n');
    expect(stored.length).toBeGreaterThan(100);
    const logged = log.lines.join('\n');
    const { createHash } = await import('node:crypto');
    for (const token of issued) {
      const secret = token.split('.')[1]!;
      const hash = createHash('sha256').update(secret).digest();
      for (const needle of [
        secret,
        hash.toString('hex'),
        hash.toString('base64'),
        hash.toString('base64url'),
      ]) {
        expect(stored.includes(needle)).toBe(false);
        expect(logged.includes(needle)).toBe(false);
      }
    }
    expect(stored).not.toMatch(/\\\\x[0-9a-f]{64}/);
  });
});
