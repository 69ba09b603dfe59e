import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { http as rawHttp } from '../support/http.js';
import { expectRevokedWithinBound } from '../support/revocation.js';
import { allow, type GatewayUnderTest, startGateway } from './support/gateway-harness.js';
import { https } from './support/https-client.js';
import { sendJson } from './support/stub-server.js';

// The real nginx with the auth cache on (500 ms windows), in front of the stub sidecar and app.
const WINDOW_MS = 500;
let gw: GatewayUnderTest;

beforeAll(async () => {
  gw = await startGateway({ settings: { auth_cache: { window_ms: WINDOW_MS } } });
});
afterAll(() => gw?.stop());
beforeEach(() => gw.reset());

let n = 0;
const credential = () => `apk ${++n}.${'k'.repeat(43)}`;
const get = (authorization: string, path = '/data') =>
  https(gw.httpsPort, path, gw.ca, { headers: { Authorization: authorization } });

describe('nginx reuses the sidecar "yes" within one window', () => {
  test('a burst with one credential asks the sidecar once per window it spans', async () => {
    const auth = credential();
    gw.stubSidecar.handler = allow({ 'X-Client-Id': '7', 'X-Client-Name': 'seven' });
    const started = Date.now();
    for (let i = 0; i < 10; i += 1) expect((await get(auth)).status).toBe(200);
    const windowsSpanned = Math.floor((Date.now() - started) / WINDOW_MS) + 2;
    expect(gw.authCalls().length).toBeGreaterThanOrEqual(1);
    expect(gw.authCalls().length).toBeLessThanOrEqual(windowsSpanned);
    // Cached answers still carry the identity to the app, and forged headers are still replaced.
    expect(gw.stubApp.requests.map((r) => r.headers['x-client-id'])).toEqual(Array(10).fill('7'));
  });

  test("another credential is another entry: never the first one's answer", async () => {
    const good = credential();
    const other = credential();
    gw.stubSidecar.handler = (seen, res) =>
      seen.headers.authorization === good
        ? allow({ 'X-Client-Id': '1' })(seen, res)
        : sendJson(res, 401, { errors: [{ code: 'INVALID_API_KEY', message: 'no' }] });
    expect((await get(good)).status).toBe(200);
    for (let i = 0; i < 3; i += 1) expect((await get(other)).status).toBe(401);
    expect((await get('')).status).toBe(401);
  });

  test('refusals are never cached: every refused request asks the sidecar again', async () => {
    const auth = credential();
    gw.stubSidecar.handler = (_, res) =>
      sendJson(res, 401, { errors: [{ code: 'X', message: 'no' }] });
    for (let i = 0; i < 4; i += 1) expect((await get(auth)).status).toBe(401);
    expect(gw.authCalls()).toHaveLength(4);
  });

  test('once the sidecar says no, a cached yes is gone when its window ends', async () => {
    const auth = credential();
    for (let i = 0; i < 3; i += 1) expect((await get(auth)).status).toBe(200);
    // The sidecar now refuses this credential, as after a DELETE.
    gw.stubSidecar.handler = (_, res) =>
      sendJson(res, 401, { errors: [{ code: 'INVALID_API_KEY', message: 'gone' }] });
    await expectRevokedWithinBound(async () => (await get(auth)).status, Date.now(), WINDOW_MS);
  });

  test('management paths ask the sidecar every time, requiring an admin', async () => {
    const auth = credential();
    gw.stubSidecar.handler = (seen, res) => {
      if (seen.url === '/auth')
        allow({ 'X-Client-Id': '1', 'X-Client-Is-Admin': 'true' })(seen, res);
      else sendJson(res, 200, { items: [] });
    };
    for (let i = 0; i < 3; i += 1)
      expect((await get(auth, '/v1/management/api-clients')).status).toBe(200);
    expect(gw.authCalls()).toHaveLength(3);
    for (const call of gw.authCalls()) expect(call.headers['x-gateway-require-admin']).toBe('true');
  });
});

describe("nginx's own refusals are JSON too", () => {
  const url = () => `https://localhost:${gw.httpsPort}/data`;
  test('a repeated Authorization header: 400 JSON', async () => {
    const res = await rawHttp(url(), {
      headers: ['Authorization', credential(), 'Authorization', credential()],
      tls: { ca: gw.ca },
    });
    expect(res.status).toBe(400);
    expect(res.json).toEqual({ errors: [expect.objectContaining({ code: 'BAD_REQUEST' })] });
    expect(gw.authCalls()).toHaveLength(0);
  });

  test('headers larger than nginx accepts: 431 JSON', async () => {
    const res = await rawHttp(url(), {
      headers: { Authorization: `apk 1.${'a'.repeat(20_000)}` },
      tls: { ca: gw.ca },
    });
    expect(res.status).toBe(431);
    expect(res.json).toEqual({ errors: [expect.objectContaining({ code: 'HEADERS_TOO_LARGE' })] });
  });
});
