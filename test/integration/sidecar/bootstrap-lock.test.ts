import { join } from 'node:path';
import pg from 'pg';
import { beforeAll, describe, expect, test } from 'vitest';
import { REFUSED_LINE } from '../../../sidecar/bootstrap.js';
import { freshDatabase } from '../../support/database.js';
import { freePort } from '../../support/embedded-postgres.js';
import { http } from '../../support/http.js';
import { CLIENTS } from '../../support/management.js';
import { type TestProof, testProof } from '../../support/nginx-proof.js';
import { startProcess } from '../../support/process.js';
import { apk as apkOnly } from '../../support/sidecar.js';

// The bootstrap lock through the built sidecar process, restarted on one database as an
// operator restarts it with API_KEY_CREATE=true left in the composition file.

const MAIN = join(import.meta.dirname, '../../../dist/sidecar/main.js');
const SETTINGS = '/v1/management/settings';
const KEY_LINE = /^NEWLY GENERATED API KEY: (\d+\.[A-Za-z0-9_-]{43})$/;
let db: string;
let proof: TestProof;
/** The key, with the proof nginx would show (this test asks the sidecar as nginx does). */
const apk = (key: string) => ({ ...proof.header, ...apkOnly(key) });

beforeAll(async () => {
  db = await freshDatabase();
  proof = await testProof();
});

/** One start of the sidecar with API_KEY_CREATE=true; stopped again once `use` is done. */
async function startOnce<T>(
  use: (run: { url: string; key: string | null; stdout: string; stderr: string }) => Promise<T>,
): Promise<T> {
  const port = await freePort();
  const proc = startProcess(process.execPath, [MAIN], {
    PATH: process.env.PATH,
    DATABASE_URL: db,
    PORT: String(port),
    API_KEY_CREATE: 'true',
    // Not the default 9464: other suites' sidecars run at the same time.
    METRICS_LISTEN: 'off',
    ...proof.env,
  });
  try {
    await proc.waitFor(/sidecar listening/);
    const stdout = proc.stdout();
    const key = KEY_LINE.exec(stdout.trim())?.[1] ?? null;
    return await use({ url: `http://127.0.0.1:${port}`, key, stdout, stderr: proc.stderr() });
  } finally {
    expect(await proc.stop()).toBe(0);
  }
}

/** One statement on the test database, on its own connection. */
async function query<R extends pg.QueryResultRow>(text: string): Promise<R[]> {
  const client = new pg.Client({ connectionString: db });
  await client.connect();
  try {
    return (await client.query<R>(text)).rows;
  } finally {
    await client.end();
  }
}

async function adminCount(): Promise<number> {
  const rows = await query<{ n: number }>(
    'SELECT count(*)::int AS n FROM api_clients WHERE is_admin',
  );
  return rows[0]!.n;
}

interface AuditRow {
  action: string;
  outcome: string;
  actor_id: number | null;
  actor_auth_method: string;
  target_id: number | null;
  details: Record<string, unknown>;
}

const auditRows = (action: string) =>
  query<AuditRow>(
    `SELECT action, outcome, actor_id, actor_auth_method, target_id, details
     FROM audit_events WHERE action = '${action}' ORDER BY id`,
  );

const warnings = (stderr: string) =>
  stderr
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as { level: string; message: string; reason?: string })
    .filter((entry) => entry.level === 'warn');

const put = (url: string, key: string, locked: boolean) =>
  http(`${url}${SETTINGS}`, {
    method: 'PUT',
    headers: apk(key),
    json: { bootstrap_locked: locked },
  });

describe('the bootstrap lock (PUT /v1/management/settings)', () => {
  test('locked with an admin: a restart mints nothing and says why; unlocked: it mints again', async () => {
    // First start: unlocked (the default), so a key, as the seed says.
    const first = await startOnce(async ({ url, key }) => {
      expect(key).not.toBeNull();
      const before = await http(`${url}${SETTINGS}`, { headers: apk(key!) });
      expect(before.json).toEqual({ bootstrap_locked: false });
      const locked = await put(url, key!, true);
      expect(locked.status, locked.text).toBe(200);
      expect(locked.json).toEqual({ bootstrap_locked: true });
      return key!;
    });
    const admins = await adminCount();

    // Restart, locked: no key line but the reason in its place (issue 42: where the operator
    // looks), a warning in the log that says how to unlock, no new client.
    await startOnce(async ({ url, key, stdout, stderr }) => {
      expect(key).toBeNull();
      expect(stdout).toBe(`${REFUSED_LINE}\n`);
      expect(stdout).toMatch(/^NO API KEY GENERATED: .*bootstrap lock is on/);
      const [warning, ...more] = warnings(stderr);
      expect(more).toEqual([]);
      expect(warning?.reason).toBe('bootstrap_locked');
      expect(warning?.message).toMatch(/bootstrap lock is on and an admin client exists/);
      expect(warning?.message).toContain('PUT /v1/management/settings {"bootstrap_locked": false}');
      expect(await adminCount()).toBe(admins);
      // The lock held across the restart; the earlier admin key still works and unlocks.
      expect((await http(`${url}${SETTINGS}`, { headers: apk(first) })).json).toEqual({
        bootstrap_locked: true,
      });
      expect((await put(url, first, false)).status).toBe(200);
    });

    // Both the lock's changes and the refused mint are in the audit trail, with their actors.
    const firstId = Number(first.split('.')[0]);
    expect(await auditRows('settings.update')).toEqual(
      [true, false].map((locked) => ({
        action: 'settings.update',
        outcome: 'success',
        actor_id: firstId,
        actor_auth_method: 'api_key',
        target_id: null,
        details: { before: { bootstrap_locked: !locked }, after: { bootstrap_locked: locked } },
      })),
    );
    expect(await auditRows('bootstrap_key.refuse')).toEqual([
      {
        action: 'bootstrap_key.refuse',
        outcome: 'failure',
        actor_id: null,
        actor_auth_method: 'bootstrap',
        target_id: null,
        details: { reason: 'bootstrap_locked', admin_clients: admins },
      },
    ]);

    // Restart, unlocked: a key again.
    await startOnce(async ({ key, stderr }) => {
      expect(key).not.toBeNull();
      expect(warnings(stderr)).toEqual([]);
    });
    expect(await adminCount()).toBe(admins + 1);
  });

  test('locked with no admin client left: a key is minted anyway (never unrecoverable), with a warning', async () => {
    const key = await startOnce(async ({ url, key }) => {
      expect((await put(url, key!, true)).status).toBe(200);
      // Every other admin deleted and this one demoted: nobody could unlock any more.
      const list = await http(`${url}${CLIENTS}`, { headers: apk(key!) });
      const admins = (list.json as { items: { id: number; is_admin: boolean }[] }).items.filter(
        (c) => c.is_admin,
      );
      const self = Number(key!.split('.')[0]);
      for (const c of admins.filter((c) => c.id !== self)) {
        const res = await http(`${url}${CLIENTS}/${c.id}`, {
          method: 'DELETE',
          headers: apk(key!),
        });
        expect(res.status).toBe(200);
      }
      const demoted = await http(`${url}${CLIENTS}/${self}`, {
        method: 'PUT',
        headers: apk(key!),
        json: { is_admin: false },
      });
      expect(demoted.status, demoted.text).toBe(200);
      return key!;
    });
    expect(await adminCount()).toBe(0);

    await startOnce(async ({ url, key: minted, stderr }) => {
      expect(minted).not.toBeNull();
      expect(warnings(stderr).map((w) => w.reason)).toEqual(['bootstrap_locked_without_admin']);
      // The lock stays on; the new admin can see it and decide.
      const res = await http(`${url}${SETTINGS}`, { headers: apk(minted!) });
      expect(res.json).toEqual({ bootstrap_locked: true });
      // The demoted key is no admin any more.
      expect((await http(`${url}${SETTINGS}`, { headers: apk(key) })).status).toBe(403);
    });
  });

  test('locked, with every admin expired: a key is minted anyway (an expired admin cannot unlock)', async () => {
    // The previous test left the lock on and one admin; expire every admin.
    expect(await adminCount()).toBeGreaterThan(0);
    await query("UPDATE api_clients SET expires_at = now() - interval '1 minute' WHERE is_admin");
    const refusals = (await auditRows('bootstrap_key.refuse')).length;
    await startOnce(async ({ url, key, stderr }) => {
      expect(key).not.toBeNull();
      expect(warnings(stderr).map((w) => w.reason)).toEqual(['bootstrap_locked_without_admin']);
      expect((await http(`${url}${SETTINGS}`, { headers: apk(key!) })).json).toEqual({
        bootstrap_locked: true,
      });
    });
    expect(await auditRows('bootstrap_key.refuse')).toHaveLength(refusals);
  });
});
