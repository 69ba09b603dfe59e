import { createHash } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { freshDatabase } from '../support/database.js';
import { CLIENTS, createClient, uniqueName } from '../support/management.js';
import { startNativeStack } from '../support/native-stack.js';
import { apk } from '../support/sidecar.js';
import type { Stack } from '../support/stack.js';
import { callStack } from '../support/stack-http.js';

// Expiry, rotation and the audit trail as a caller sees them: through the real nginx, whose
// decision cache may hold a "yes" for up to 30 s. Real time here (nginx's clock cannot be
// moved): expiries of 2-3 s, awaited by polling. The exact rules live in
// test/integration/sidecar/key-lifecycle.test.ts with a frozen clock.

/**
 * nginx reads its clock once per event-loop turn: a request may be judged by a time a few ms
 * behind the one the test took before sending it.
 */
const CLOCK_SLACK_MS = 100;

let stack: Stack & { home: string };
let db: pg.Client;
const issued: string[] = [];

beforeAll(async () => {
  const url = await freshDatabase();
  stack = await startNativeStack({ env: { DATABASE_URL: url } });
  db = new pg.Client({ connectionString: url });
  await db.connect();
}, 240_000);
afterAll(async () => {
  await db?.end();
  await stack?.close();
});

function call(path: string, key: string, init: { method?: string; json?: unknown } = {}) {
  return callStack(stack, path, { ...init, headers: apk(key) });
}

async function newKey(body: Record<string, unknown> = {}): Promise<{ id: number; token: string }> {
  const client = await createClient(
    stack.baseUrl,
    stack.adminKey,
    { name: uniqueName('life'), is_admin: false, generate_api_key: true, ...body },
    { ...(await stack.tls()), connectTo: '127.0.0.1' },
  );
  issued.push(client.token);
  return client;
}

/**
 * Sends `token` until `until` (ms): a 200 before `deadline`, a 401 with `code` from then on
 * (and once refused, never accepted again). Returns how many of each it saw.
 */
async function acceptedUntil(token: string, deadline: number, code: string, until: number) {
  let accepted = 0;
  let refused = 0;
  const seen: string[] = [];
  while (Date.now() < until) {
    const startedAt = Date.now();
    const res = await call('/api', token);
    seen.push(`${startedAt - deadline}ms:${res.status}`);
    if (startedAt >= deadline + CLOCK_SLACK_MS || refused > 0) {
      expect(res.status, seen.join(' ')).toBe(401);
    }
    if (res.status === 401) {
      refused += 1;
      expect((res.json as { errors: { code: string }[] }).errors[0]!.code).toBe(code);
    } else {
      expect(res.status, seen.join(' ')).toBe(200);
      accepted += 1;
    }
    await new Promise((r) => setTimeout(r, 20));
  }
  return { accepted, refused };
}

describe('expiry through nginx', () => {
  test('a key whose "yes" nginx cached is refused from its expiry on, with API_CLIENT_EXPIRED', async () => {
    const expiresAt = Date.now() + 2_500;
    const { token } = await newKey({ expires_at: new Date(expiresAt).toISOString() });
    // Seen (and cached by nginx) well before it expires.
    expect((await call('/api', token)).status).toBe(200);
    const { accepted, refused } = await acceptedUntil(
      token,
      expiresAt,
      'API_CLIENT_EXPIRED',
      expiresAt + 1_000,
    );
    expect(accepted).toBeGreaterThan(5);
    expect(refused).toBeGreaterThan(5);
  }, 30_000);
});

describe('rotation through nginx', () => {
  test('the old secret passes during the grace period and is refused after it; the new one at once', async () => {
    const { id, token: old } = await newKey();
    expect((await call('/api', old)).status).toBe(200);
    const rotated = await call(`${CLIENTS}/${id}/rotate`, stack.adminKey, {
      method: 'POST',
      json: { grace_period_seconds: 2 },
    });
    expect(rotated.status).toBe(200);
    const body = rotated.json as { token: string; previous_key_expires_at: string };
    issued.push(body.token);
    expect((await call('/api', body.token)).status).toBe(200);
    const graceEnd = Date.parse(body.previous_key_expires_at);
    const { accepted, refused } = await acceptedUntil(
      old,
      graceEnd,
      'INVALID_API_KEY',
      graceEnd + 1_000,
    );
    expect(accepted).toBeGreaterThan(5);
    expect(refused).toBeGreaterThan(5);
    expect((await call('/api', body.token)).status).toBe(200);
  }, 30_000);

  test('grace 0: the old secret, cached a moment ago, is refused by the very next request', async () => {
    const { id, token: old } = await newKey();
    for (let i = 0; i < 3; i += 1) expect((await call('/api', old)).status).toBe(200);
    const rotated = await call(`${CLIENTS}/${id}/rotate`, stack.adminKey, {
      method: 'POST',
      json: { grace_period_seconds: 0 },
    });
    expect(rotated.status).toBe(200);
    const fresh = (rotated.json as { token: string }).token;
    issued.push(fresh);
    expect((await call('/api', old)).status).toBe(401);
    expect((await call('/api', fresh)).status).toBe(200);
  });
});

describe('the audit trail through nginx', () => {
  test('each action names the admin and the address; failed keys are counted; no secret in the table or the log', async () => {
    const { id } = await newKey();
    const deleted = await call(`${CLIENTS}/${id}`, stack.adminKey, { method: 'DELETE' });
    expect(deleted.status).toBe(200);
    const res = await call(`/v1/management/audit-events?target=${id}`, stack.adminKey);
    expect(res.status).toBe(200);
    const items = (res.json as { items: Record<string, unknown>[] }).items;
    const adminId = Number(stack.adminKey.split('.')[0]);
    expect(items.map((e) => e.action)).toEqual(['api_client.delete', 'api_client.create']);
    // The id nginx gave the caller is the one the trail keeps for the deletion.
    const requestId = deleted.headers['x-request-id'];
    expect(requestId).toMatch(/^[0-9a-f]{32}$/);
    expect(items[0]).toMatchObject({ request_id: requestId });
    for (const event of items) {
      expect(event).toMatchObject({
        outcome: 'success',
        actor: { api_key_id: adminId, auth_method: 'api_key' },
        target_id: id,
        source_address: '127.0.0.1',
      });
    }

    // A wrong secret for an existing client, through nginx: counted within a flush (5 s).
    const victim = await newKey();
    const wrong = `${victim.id}.${'Z'.repeat(43)}`;
    for (let i = 0; i < 3; i += 1) expect((await call('/api', wrong)).status).toBe(401);
    let counted = 0;
    for (let tries = 0; counted < 3 && tries < 200; tries += 1) {
      const failures = await call('/v1/management/auth-failures', stack.adminKey);
      counted = (failures.json as { items: { api_key_id: number; count: number }[] }).items
        .filter((f) => f.api_key_id === victim.id)
        .reduce((n, f) => n + f.count, 0);
      if (counted < 3) await new Promise((r) => setTimeout(r, 100));
    }
    expect(counted).toBe(3);

    const { rows } = await db.query<{ text: string }>(
      `SELECT coalesce(string_agg(row_to_json(a)::text, E'\\n'), '') AS text FROM audit_events a`,
    );
    const stored = rows[0]!.text;
    const logged = await stack.logs('gateway');
    expect(stored).toContain('api_client.rotate');
    expect(issued.length).toBeGreaterThanOrEqual(6);
    for (const token of issued) {
      const secret = token.split('.')[1]!;
      const hash = createHash('sha256').update(secret).digest();
      for (const needle of [secret, hash.toString('hex'), hash.toString('base64')]) {
        expect(stored.includes(needle)).toBe(false);
        expect(logged.includes(needle)).toBe(false);
      }
    }
  }, 60_000);
});
