import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { type HttpOptions, http } from '../support/http.js';
import { waitForLogLine } from '../support/log-lines.js';
import { CLIENTS, createClient, uniqueName } from '../support/management.js';
import { sample } from '../support/metrics-text.js';
import { launchNativeGateway, type NativeGatewayProcess } from '../support/native-gateway.js';
import { apk } from '../support/sidecar.js';

// Request ids, logs, metrics and health through the real native gateway (`npm start`'s
// runner): nginx with its Lua code, the sidecar, the engine and PostgreSQL as processes.

let home: string;
let gw: NativeGatewayProcess;
let user: { id: number; token: string };

beforeAll(async () => {
  home = await mkdtemp(join(tmpdir(), 'gw-ops-'));
  // debug: the sidecar also logs each /auth decision (with its request id).
  // ENGINE_LOG_REQUESTS: the app logs each request too (off by default).
  gw = await launchNativeGateway({
    home,
    env: { API_KEY_CREATE: 'true', LOG_LEVEL: 'debug', ENGINE_LOG_REQUESTS: 'true' },
  });
  user = await createClient(
    gw.loopbackUrl,
    gw.adminKey,
    { name: uniqueName('ops'), is_admin: false, generate_api_key: true },
    tls(),
  );
}, 180_000);
afterAll(async () => {
  await gw?.stop();
  await rm(home, { recursive: true, force: true });
});

function tls(): { ca: string; servername: string } {
  return { ca: gw.ca, servername: gw.fqdn };
}

function call(path: string, options: HttpOptions = {}) {
  return http(`${gw.loopbackUrl}${path}`, { ...options, tls: tls() });
}

const ID = /^[0-9a-f]{32}$/;

async function scrape(): Promise<string> {
  const res = await http(`${gw.metricsUrl}/metrics`);
  expect(res.status).toBe(200);
  return res.text;
}

/** Scrapes until `predicate` holds: nginx's workers add their counts about once a second. */
async function scrapeUntil(predicate: (text: string) => boolean): Promise<string> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const text = await scrape();
    if (predicate(text)) return text;
    if (Date.now() > deadline) throw new Error(`metrics never matched:\n${text}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe('request ids', () => {
  test("one id, nginx's, in the caller's answer, the app's log and nginx's, and the sidecar's for what it decides", async () => {
    const res = await call('/api', {
      headers: { ...apk(user.token), 'X-Request-Id': 'chosen-by-the-caller' },
    });
    expect(res.status).toBe(200);
    const id = res.headers['x-request-id'];
    // Exactly one, nginx's own: the caller's is replaced, the app's echo (if any) dropped.
    expect(id).toMatch(ID);
    const fields = (line: string) => JSON.parse(line) as Record<string, unknown>;
    const app = fields(await waitForLogLine(home, 'app.log', (l) => l.includes(id as string)));
    expect(app).toMatchObject({ message: 'engine request', request_id: id, path: '/api' });
    await waitForLogLine(
      home,
      'nginx-access.log',
      (l) => l.endsWith(` ${id}`) && l.includes('GET /api '),
    );
    const logs = await readFile(join(home, 'logs', 'app.log'), 'utf8');
    expect(logs).not.toContain('chosen-by-the-caller');
    // nginx decided that key from its key table; a decision the sidecar makes (management is
    // asked every time) is logged under the request's id too.
    const asked = await call(`${CLIENTS}/${user.id}`, { headers: apk(gw.adminKey) });
    const askedId = asked.headers['x-request-id'] as string;
    const decision = fields(await waitForLogLine(home, 'sidecar.log', (l) => l.includes(askedId)));
    expect(decision).toMatchObject({
      level: 'debug',
      message: 'auth decision',
      request_id: askedId,
    });
    expect(decision).toMatchObject({ method: 'apk', result: 'allowed' });
  });

  test('management requests: the id in the answer and in the sidecar log line', async () => {
    const res = await call(`${CLIENTS}/${user.id}`, { headers: apk(gw.adminKey) });
    expect(res.status).toBe(200);
    const id = res.headers['x-request-id'] as string;
    expect(id).toMatch(ID);
    const line = JSON.parse(
      await waitForLogLine(
        home,
        'sidecar.log',
        (l) => l.includes(`"${id}"`) && l.includes('management request'),
      ),
    );
    expect(line).toMatchObject({
      level: 'info',
      request_id: id,
      method: 'GET',
      path: `${CLIENTS}/${user.id}`,
      status: 200,
    });
  });

  test("nginx's own answers carry one too: a Lua refusal, an error page, a reserved path", async () => {
    const refused = await call('/api');
    expect(refused.status).toBe(401);
    const notFound = await call('/_gateway/anything', { headers: apk(user.token) });
    expect(notFound.status).toBe(404);
    const badMethod = await call('/api', { method: 'TRACE' });
    expect(badMethod.status).toBe(405);
    const ids = [refused, notFound, badMethod].map((r) => r.headers['x-request-id']);
    for (const id of ids) expect(id).toMatch(ID);
    expect(new Set(ids).size).toBe(3);
  });
});

describe('metrics and health', () => {
  test('live and ready on the metrics listener, which the runner names', async () => {
    expect(gw.output()).toContain(`Metrics: ${gw.metricsUrl}/metrics`);
    expect((await http(`${gw.metricsUrl}/livez`)).json).toEqual({ status: 'live' });
    const ready = await http(`${gw.metricsUrl}/readyz`);
    expect(ready.status).toBe(200);
    expect(ready.json).toEqual({ status: 'ready' });
  });

  test("decisions counted by the sidecar, key-record hits and refusals by nginx's Lua code", async () => {
    const before = await scrapeUntil((t) => sample(t, 'gateway_nginx_up') === 1);
    // nginx holds the key table (docs/decisions/20261127-key-table-replica.md): every API key
    // is decided from its record there, a new client's first request included.
    const hitsBefore = sample(before, 'gateway_nginx_key_record_accepted_total');
    const refusedBefore = sample(before, 'gateway_nginx_refusals_total{status="401"}');
    // An id no client has: refused by nginx alone, as the complete key table says.
    const badKey = `${900_000_000 + Math.floor(Math.random() * 1_000_000)}.${'x'.repeat(43)}`;
    const fresh = await createClient(
      gw.loopbackUrl,
      gw.adminKey,
      { name: uniqueName('ops-metrics'), is_admin: false, generate_api_key: true },
      tls(),
    );
    for (let i = 0; i < 5; i += 1) {
      expect((await call('/api', { headers: apk(fresh.token) })).status).toBe(200);
    }
    // On a quiet pair: while the creation's notice is pending (until the next heartbeat comes
    // back), an id nginx does not hold is asked about (docs/decisions/20261201-no-change-skipped.md).
    await new Promise((r) => setTimeout(r, 1_500));
    expect((await call('/api', { headers: apk(badKey) })).status).toBe(401);
    const text = await scrapeUntil(
      (t) =>
        sample(t, 'gateway_nginx_key_record_accepted_total') >= hitsBefore + 5 &&
        sample(t, 'gateway_nginx_refusals_total{status="401"}') >= refusedBefore + 1,
    );
    // Management is asked every time: the admin's create was the sidecar's decision.
    expect(
      sample(text, 'gateway_auth_decisions_total{method="apk",result="allowed"}'),
    ).toBeGreaterThanOrEqual(1);
    expect(
      sample(text, 'gateway_auth_decision_duration_seconds_count{method="apk"}'),
    ).toBeGreaterThanOrEqual(1);
    expect(
      sample(text, 'gateway_auth_decisions_total{method="apk",result="INVALID_API_KEY"}'),
    ).toBe(0);
    expect(sample(text, 'gateway_key_table_complete')).toBe(1);
    expect(sample(text, 'gateway_key_table_records')).toBeGreaterThanOrEqual(2);
    expect(sample(text, 'gateway_key_table_full')).toBe(0);
    expect(text).toContain('gateway_nginx_decision_cache_evictions_total 0');
    expect(text).toMatch(/^gateway_db_pool_connections\{pool="auth",state="total"\} [1-9]/m);
    expect(
      sample(text, 'gateway_db_query_duration_seconds_count{pool="management"}'),
    ).toBeGreaterThan(0);

    // A change pushed through LISTEN/NOTIFY to nginx: its lag is measured once acknowledged.
    const lagBefore = sample(text, 'gateway_revocation_push_lag_seconds_count');
    const del = await call(`${CLIENTS}/${fresh.id}`, {
      method: 'DELETE',
      headers: apk(gw.adminKey),
    });
    expect(del.status).toBe(200);
    const after = await scrapeUntil(
      (t) => sample(t, 'gateway_revocation_push_lag_seconds_count') > lagBefore,
    );
    expect(sample(after, 'gateway_revocation_push_failures_total{scope="clients"}')).toBe(0);
  });

  test("the metrics and health paths are not reachable through nginx's public port", async () => {
    for (const path of ['/metrics', '/livez', '/readyz']) {
      for (const headers of [{}, apk(gw.adminKey)]) {
        const res = await call(path, { headers });
        expect(res.status, path).not.toBe(200);
        expect(res.text).not.toContain('gateway_');
        expect(res.text).not.toContain('"status":"ready"');
      }
    }
  });

  test('no API key (or its secret) in the metrics or in any log', async () => {
    const secrets = [gw.adminKey, user.token].map((key) => key.split('.')[1]!);
    const text = await scrape();
    const logs = await Promise.all(
      ['sidecar.log', 'app.log', 'nginx-access.log', 'nginx-error.log', 'nginx.log'].map((f) =>
        readFile(join(home, 'logs', f), 'utf8').catch(() => ''),
      ),
    );
    // The one documented exception: the bootstrap line that hands the admin key over.
    const scanned = [text, ...logs]
      .join('\n')
      .split('\n')
      .filter((l) => !l.includes('NEWLY GENERATED API KEY'));
    expect(scanned.length).toBeGreaterThan(20);
    for (const secret of secrets) {
      expect(scanned.filter((l) => l.includes(secret))).toEqual([]);
    }
  });
});
