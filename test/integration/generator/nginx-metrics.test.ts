import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { CONTROL } from '../../../common/contract.js';
import { controlRequest } from '../../support/nginx-control.js';
import { type GatewayUnderTest, startGateway } from './support/gateway-harness.js';
import { https } from './support/https-client.js';
import { sendJson } from './support/stub-server.js';

// The real nginx and its Lua code in front of the stub sidecar and app: the request id on
// every hop, and the Lua counters on the control socket. A decision cache of 128 KB, so a few
// thousand credentials overflow it.
let gw: GatewayUnderTest;

beforeAll(async () => {
  gw = await startGateway({ settings: { auth_cache: { max_age_ms: 60_000, size: '128k' } } });
});
afterAll(() => gw?.stop());

let n = 0;
const credential = () => `apk ${++n}.${'k'.repeat(43)}`;
const get = (authorization: string, headers: Record<string, string> = {}) =>
  https(gw.httpsPort, '/data', gw.ca, { headers: { Authorization: authorization, ...headers } });

/** GET on nginx's control socket, as the sidecar's /metrics does: every key nginx wrote. */
async function counters(): Promise<{ status: number; body: Record<string, number> }> {
  const { status, text } = await controlRequest(gw, CONTROL.metrics);
  return { status, body: JSON.parse(text) as Record<string, number> };
}

/** Reads the counters until `predicate` holds: each worker adds its counts once a second. */
async function countersUntil(
  predicate: (c: Record<string, number>) => boolean,
): Promise<Record<string, number>> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const { body } = await counters();
    if (predicate(body)) return body;
    if (Date.now() > deadline) throw new Error(`counters never matched: ${JSON.stringify(body)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('request id', () => {
  test('the same id in the answer, on /auth and at the app; the caller cannot choose it', async () => {
    gw.reset();
    const res = await get(credential(), { 'X-Request-Id': 'mine' });
    expect(res.status).toBe(200);
    const id = res.headers['x-request-id'];
    expect(id).toMatch(/^[0-9a-f]{32}$/);
    expect(gw.authCalls().map((c) => c.headers['x-request-id'])).toEqual([id]);
    expect(gw.stubApp.requests.map((r) => r.headers['x-request-id'])).toEqual([id]);
  });

  test("an app's own X-Request-Id never reaches the caller: one header, nginx's", async () => {
    gw.reset();
    gw.stubApp.handler = (_, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json', 'X-Request-Id': 'from-the-app' });
      res.end('{}');
    };
    const res = await get(credential());
    expect(res.status).toBe(200);
    expect(res.headers['x-request-id']).toMatch(/^[0-9a-f]{32}$/);
  });
});

describe('Lua counters on the control socket', () => {
  test('hits, misses and refusals by status; evictions when the cache overflows', async () => {
    gw.reset();
    const before = await counters();
    expect(before.status).toBe(200);
    const auth = credential();
    for (let i = 0; i < 3; i += 1) expect((await get(auth)).status).toBe(200);
    gw.stubSidecar.handler = (_, res) =>
      sendJson(res, 401, { errors: [{ code: 'INVALID_API_KEY', message: 'no' }] });
    expect((await get(credential())).status).toBe(401);
    gw.reset();
    const after = await countersUntil(
      (c) => (c.cache_hit ?? 0) >= (before.body.cache_hit ?? 0) + 2 && (c.refused_401 ?? 0) >= 1,
    );
    expect(after.cache_miss).toBeGreaterThanOrEqual((before.body.cache_miss ?? 0) + 1);

    // Many credentials, 16 at a time, overflow 128 KB: storing then evicts unexpired ones.
    const many = Array.from({ length: 3000 }, () => credential());
    for (let i = 0; i < many.length; i += 16) {
      await Promise.all(many.slice(i, i + 16).map((c) => get(c)));
    }
    await countersUntil((c) => (c.cache_eviction ?? 0) > 0);
  }, 120_000);

  test('only GET; no counter shows a credential', async () => {
    expect((await controlRequest(gw, CONTROL.metrics, 'POST')).status).toBe(405);
    const { body } = await counters();
    expect(JSON.stringify(body)).not.toContain('kkkk');
    expect(Object.values(body).every((v) => typeof v === 'number')).toBe(true);
  });
});
