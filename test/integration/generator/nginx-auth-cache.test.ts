import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { CONTROL } from '../../../common/contract.js';
import { http as rawHttp } from '../../support/http.js';
import { controlPost, controlRequest } from '../../support/nginx-control.js';
import { allow, type GatewayUnderTest, startGateway } from './support/gateway-harness.js';
import { https } from './support/https-client.js';
import { sendJson } from './support/stub-server.js';

// The real nginx with the Lua decision cache on, in front of the stub sidecar and app. A short
// lifetime, so expiry is observable; revocation is pushed through the control socket.
const MAX_AGE_MS = 3_000;
let gw: GatewayUnderTest;

beforeAll(async () => {
  gw = await startGateway({ settings: { auth_cache: { max_age_ms: MAX_AGE_MS } } });
});
afterAll(() => gw?.stop());
beforeEach(() => gw.reset());

let n = 0;
const credential = () => `apk ${++n}.${'k'.repeat(43)}`;
const get = (authorization: string, path = '/data') =>
  https(gw.httpsPort, path, gw.ca, { headers: { Authorization: authorization } });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** POSTs to nginx's control socket, as the sidecar does. */
const control = (path: string, body = '') => controlPost(gw, path, body);

describe('the decision cache in shared memory', () => {
  test('a hit passes without asking the sidecar, and still carries the identity', async () => {
    const auth = credential();
    gw.stubSidecar.handler = allow({ 'X-Client-Id': '7', 'X-Client-Name': 'seven' });
    for (let i = 0; i < 10; i += 1) expect((await get(auth)).status).toBe(200);
    expect(gw.authCalls()).toHaveLength(1);
    expect(gw.stubApp.requests.map((r) => r.headers['x-client-id'])).toEqual(Array(10).fill('7'));
    expect(gw.stubApp.requests.map((r) => r.headers['x-client-name'])).toEqual(
      Array(10).fill('seven'),
    );
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
    // The same credential with one byte changed is a different key.
    expect((await get(`${good.slice(0, -1)}j`)).status).toBe(401);
  });

  test('refusals are never cached: every refused request asks the sidecar again', async () => {
    const auth = credential();
    gw.stubSidecar.handler = (_, res) =>
      sendJson(res, 401, { errors: [{ code: 'X', message: 'no' }] });
    for (let i = 0; i < 4; i += 1) expect((await get(auth)).status).toBe(401);
    expect(gw.authCalls()).toHaveLength(4);
  });

  test('an entry lives at most max_age_ms: then the sidecar is asked again', async () => {
    const auth = credential();
    expect((await get(auth)).status).toBe(200);
    expect((await get(auth)).status).toBe(200);
    expect(gw.authCalls()).toHaveLength(1);
    await sleep(MAX_AGE_MS + 200);
    expect((await get(auth)).status).toBe(200);
    expect(gw.authCalls()).toHaveLength(2);
  });

  test("a token's entry never outlives its exp, however long max_age_ms is", async () => {
    const auth = `Bearer token-${++n}`;
    // Two seconds ahead: the first answer must still be kept on a busy machine.
    const exp = Math.floor(Date.now() / 1000) + 2;
    gw.stubSidecar.handler = allow({
      'X-Gateway-Valid-Until': String(exp),
      'X-Auth-Method': 'bearer',
    });
    expect((await get(auth)).status).toBe(200);
    expect((await get(auth)).status).toBe(200);
    expect(gw.authCalls()).toHaveLength(1);
    // Past exp, well inside max_age_ms: the sidecar decides again (here: expired, refused).
    while (Date.now() < exp * 1000 + 50) await sleep(20);
    gw.stubSidecar.handler = (_, res) =>
      sendJson(res, 401, { errors: [{ code: 'INVALID_TOKEN', message: 'expired' }] });
    expect((await get(auth)).status).toBe(401);
    expect(gw.authCalls()).toHaveLength(2);
  });

  test('a decision already past its exp is not kept at all', async () => {
    const auth = `Bearer token-${++n}`;
    gw.stubSidecar.handler = allow({
      'X-Gateway-Valid-Until': String(Math.floor(Date.now() / 1000) - 5),
    });
    expect((await get(auth)).status).toBe(200);
    expect((await get(auth)).status).toBe(200);
    expect(gw.authCalls()).toHaveLength(2);
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

describe('revocation pushed through the control socket', () => {
  test('invalidating a client drops its decisions, and only its own', async () => {
    const mine = credential();
    const other = credential();
    gw.stubSidecar.handler = (seen, res) =>
      allow({ 'X-Gateway-Client-Row': seen.headers.authorization === mine ? '41' : '42' })(
        seen,
        res,
      );
    expect((await get(mine)).status).toBe(200);
    expect((await get(other)).status).toBe(200);
    expect(gw.authCalls()).toHaveLength(2);
    expect(await control(CONTROL.invalidate, '41')).toBe(204);
    expect((await get(mine)).status).toBe(200);
    expect((await get(other)).status).toBe(200);
    expect(gw.authCalls().map((c) => c.headers.authorization)).toEqual([mine, other, mine]);
  });

  test('invalidate-all drops every decision', async () => {
    const a = credential();
    const b = credential();
    expect((await get(a)).status).toBe(200);
    expect((await get(b)).status).toBe(200);
    expect(await control(CONTROL.invalidateAll)).toBe(204);
    expect((await get(a)).status).toBe(200);
    expect((await get(b)).status).toBe(200);
    expect(gw.authCalls()).toHaveLength(4);
  });

  test('a revocation that lands while the sidecar is answering wins over that answer', async () => {
    const auth = credential();
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    gw.stubSidecar.handler = (seen, res) => {
      void held.then(() => allow({ 'X-Gateway-Client-Row': '77' })(seen, res));
    };
    const first = get(auth);
    while (gw.authCalls().length === 0) await sleep(5);
    // The sidecar read the client before the delete; the delete's push arrives before its answer.
    expect(await control(CONTROL.invalidate, '77')).toBe(204);
    release();
    expect((await first).status).toBe(200);
    expect((await get(auth)).status).toBe(200);
    expect(gw.authCalls()).toHaveLength(2);
  });

  test('the control endpoint refuses other methods and malformed ids', async () => {
    expect((await controlRequest(gw, CONTROL.invalidate, 'GET', '1')).status).toBe(405);
    expect(await control(CONTROL.invalidate, '1;2')).toBe(400);
    expect(await control('/elsewhere')).toBe(404);
  });

  test('the public port has no control endpoint: there it is an ordinary, authenticated path', async () => {
    const auth = credential();
    gw.stubSidecar.handler = (seen, res) =>
      seen.headers.authorization === auth
        ? allow()(seen, res)
        : sendJson(res, 401, { errors: [{ code: 'MISSING_CREDENTIALS', message: 'no' }] });
    expect((await get(auth)).status).toBe(200);
    for (const path of [CONTROL.invalidateAll, CONTROL.invalidate]) {
      const anonymous = await https(gw.httpsPort, path, gw.ca, { method: 'POST', body: '1' });
      expect(anonymous.status).toBe(401);
      expect(JSON.parse(anonymous.body).errors[0].code).toBeDefined();
    }
    // With a credential the request reaches the app, not the control endpoint...
    const through = await https(gw.httpsPort, CONTROL.invalidateAll, gw.ca, {
      method: 'POST',
      headers: { Authorization: auth },
    });
    expect(JSON.parse(through.body)).toEqual({ app: true, url: CONTROL.invalidateAll });
    // ...and nothing was invalidated: the decision is still a hit.
    const calls = gw.authCalls().length;
    expect((await get(auth)).status).toBe(200);
    expect(gw.authCalls()).toHaveLength(calls);
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
