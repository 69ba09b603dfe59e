import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { keyTableLoaded, metricsText } from '../support/key-table.js';
import { CLIENTS } from '../support/management.js';
import { sample } from '../support/metrics-text.js';
import { startNativeStack } from '../support/native-stack.js';
import { startProviderForGateway } from '../support/oidc-gateway-env.js';
import type { TestOidcProvider } from '../support/oidc-provider.js';
import { apk } from '../support/sidecar.js';
import { callStack } from '../support/stack-http.js';

// A bearer token's client comes from the key table's replica, not PostgreSQL
// (docs/decisions/20261128-bearer-clients-from-the-replica.md): the sidecar holds the rows of
// the clients with a subject beside nginx's replica. Real nginx, sidecar, PostgreSQL and
// OpenID Connect provider; asserted: what the caller gets and whether PostgreSQL was asked
// (the auth pool's query count), never how fast.

type NativeStack = Awaited<ReturnType<typeof startNativeStack>>;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('bearer tokens of clients the replica holds', () => {
  let s: NativeStack;
  let provider: TestOidcProvider;
  let scratch: string;
  const ids = new Map<string, number>();

  const call = (path: string, options: Parameters<typeof callStack>[2] = {}) =>
    callStack(s, path, options);
  /** A token never presented before (a new JWT each time): nginx has decided nothing about it. */
  const freshToken = (subject: string) =>
    provider
      .issueToken(subject)
      .then((token) => call('/api', { headers: { Authorization: `Bearer ${token}` } }));
  const metricsUrl = () => s.gateway().metricsUrl;
  /** Queries the sidecar's auth pool ran (the /auth look-ups; also its readiness checks). */
  const authQueries = async () =>
    sample(await metricsText(metricsUrl()), 'gateway_db_query_duration_seconds_count{pool="auth"}');
  const change = async (subject: string, json: Record<string, unknown>) => {
    const res = await call(`${CLIENTS}/${ids.get(subject)}`, {
      method: json.delete ? 'DELETE' : 'PUT',
      headers: apk(s.adminKey),
      ...(json.delete ? {} : { json }),
    });
    expect(res.status, res.text).toBe(200);
  };

  beforeAll(async () => {
    scratch = await mkdtemp(join(tmpdir(), 'gw-e2e-bearer-'));
    const subjects = ['svc-held', 'svc-doomed', 'svc-moved', 'svc-moved-to', 'svc-expiring'];
    const started = await startProviderForGateway(scratch, [...subjects, 'svc-never', 'svc-gone']);
    provider = started.provider;
    s = await startNativeStack({ env: started.env });
    await keyTableLoaded(metricsUrl());
    for (const subject of ['svc-held', 'svc-doomed', 'svc-moved', 'svc-expiring', 'svc-gone']) {
      const res = await call(CLIENTS, {
        method: 'POST',
        headers: apk(s.adminKey),
        json: {
          name: `${subject} client`,
          is_admin: false,
          generate_api_key: false,
          api_client_id: subject,
        },
      });
      expect(res.status, res.text).toBe(201);
      ids.set(subject, (res.json as { api_key_id: number }).api_key_id);
    }
  }, 240_000);
  afterAll(async () => {
    await s?.close();
    await provider?.stop();
    if (scratch) await rm(scratch, { recursive: true, force: true });
  }, 120_000);

  test('a new token of a held client is decided without a question to PostgreSQL; an unknown subject is asked', async () => {
    expect((await freshToken('svc-held')).status).toBe(200);
    const before = await authQueries();
    for (let i = 0; i < 10; i += 1) expect((await freshToken('svc-held')).status).toBe(200);
    // At most one stray readiness check; each token's look-up would be one query.
    expect((await authQueries()) - before).toBeLessThanOrEqual(1);
    const unknown = await freshToken('svc-never');
    expect(unknown.status).toBe(401);
    expect(unknown.headers['x-jwt-error']).toBe('no API client for this token');
    expect(await authQueries()).toBeGreaterThan(before);
  });

  test('a deleted client: its new tokens and its decided ones are refused from the next request', async () => {
    const decided = await provider.issueToken('svc-doomed');
    const bearer = { Authorization: `Bearer ${decided}` };
    expect((await call('/api', { headers: bearer })).status).toBe(200);
    await change('svc-doomed', { delete: true });
    const fresh = await freshToken('svc-doomed');
    expect(fresh.status).toBe(401);
    expect(fresh.headers['x-jwt-error']).toBe('no API client for this token');
    expect((await call('/api', { headers: bearer })).status).toBe(401);
  });

  test('a subject moved to another: the old one is refused, the new one passes', async () => {
    expect((await freshToken('svc-moved')).status).toBe(200);
    await change('svc-moved', { api_client_id: 'svc-moved-to' });
    expect((await freshToken('svc-moved')).status).toBe(401);
    expect((await freshToken('svc-moved-to')).status).toBe(200);
  });

  test('an expiry set by PUT is kept and evaluated by time', async () => {
    expect((await freshToken('svc-expiring')).status).toBe(200);
    await change('svc-expiring', { expires_at: new Date(Date.now() + 2_000).toISOString() });
    expect((await freshToken('svc-expiring')).status).toBe(200);
    await sleep(2_200);
    const expired = await freshToken('svc-expiring');
    expect(expired.status).toBe(401);
    expect(expired.json).toEqual({
      errors: [expect.objectContaining({ code: 'API_CLIENT_EXPIRED' })],
    });
  });

  test('a sidecar restarted beside its running nginx holds them again without a load', {
    timeout: 120_000,
  }, async () => {
    const subjects = async () =>
      sample(await metricsText(metricsUrl()), 'gateway_key_table_subjects');
    const held = await subjects();
    expect(held).toBeGreaterThan(0);
    // More changes than a catch-up re-reads before its position (CATCH_UP_MARGIN, 1,000), so
    // the restarted sidecar's catch-up alone would not bring the bearer clients back.
    const filler = await call(CLIENTS, {
      method: 'POST',
      headers: apk(s.adminKey),
      json: { name: 'filler', is_admin: false, generate_api_key: true },
    });
    const fillerId = (filler.json as { api_key_id: number }).api_key_id;
    for (let i = 0; i < 1_100; i += 10) {
      const renames = Array.from({ length: 10 }, (_, j) =>
        call(`${CLIENTS}/${fillerId}`, {
          method: 'PUT',
          headers: apk(s.adminKey),
          json: { name: `filler-${i + j}` },
        }),
      );
      for (const res of await Promise.all(renames)) expect(res.status).toBe(200);
    }
    await sleep(1_500); // the last positions reach nginx with a heartbeat
    const pid = (await s.gateway().pid('sidecar'))!;
    process.kill(pid, 'SIGKILL');
    for (let i = 0; i < 300; i += 1) {
      const now = await s.gateway().pid('sidecar');
      const back = now !== undefined && now !== pid;
      if (back && (await subjects().catch(() => -1)) === held) break;
      await sleep(100);
    }
    await keyTableLoaded(metricsUrl());
    expect(await subjects()).toBe(held);
    // It adopted nginx's replica (no second load) and read the bearer clients by themselves.
    expect((await s.logs('gateway')).match(/key table loaded into nginx/g)).toHaveLength(1);
    expect((await freshToken('svc-held')).status).toBe(200);
    const before = await authQueries();
    for (let i = 0; i < 10; i += 1) expect((await freshToken('svc-held')).status).toBe(200);
    expect((await authQueries()) - before).toBeLessThanOrEqual(1);
  });

  test('PostgreSQL stopped: new tokens of a held client pass, a subject never held gets 503 JSON, a client deleted before stays refused', async () => {
    await change('svc-gone', { delete: true });
    await s.stopService('database');
    // Past the key table's 5 s of liveness: held rows are used while trusted (key_table.trust_s).
    await sleep(6_000);
    for (let i = 0; i < 5; i += 1) expect((await freshToken('svc-held')).status).toBe(200);
    expect((await freshToken('svc-moved-to')).status).toBe(200);
    const never = await freshToken('svc-never');
    expect(never.status).toBe(503);
    expect(never.headers['content-type']).toBe('application/json');
    expect(never.json).toEqual({ errors: [expect.objectContaining({ code: 'AUTH_UNAVAILABLE' })] });
    // Not held (deleted): asked of a database that is away, never passed.
    expect((await freshToken('svc-gone')).status).toBe(503);
    expect(sample(await metricsText(metricsUrl()), 'gateway_key_table_subjects')).toBe(3);
  }, 60_000);
});
