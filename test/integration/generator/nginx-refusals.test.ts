import type { ServerResponse } from 'node:http';
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { allow, type GatewayUnderTest, startGateway } from './support/gateway-harness.js';
import { https } from './support/https-client.js';
import { type SeenRequest, sendJson, startStub } from './support/stub-server.js';

// A request without credentials is refused by nginx itself; these ask the stub sidecar.
const STUB_CREDENTIAL = { Authorization: 'Bearer stub-token' };
const WITH_CREDENTIAL = { headers: STUB_CREDENTIAL };

// The real nginx with the rendered default.conf: refusals and failures of the stub sidecar
// and the stub app, as the caller sees them.

let gw: GatewayUnderTest;

beforeAll(async () => {
  gw = await startGateway();
});
afterAll(async () => {
  await gw?.stop();
});
beforeEach(() => gw.reset());

const ERROR_401 = { errors: [{ code: 'INVALID_TOKEN', message: 'The token has expired.' }] };
const ERROR_403 = { errors: [{ code: 'FORBIDDEN', message: 'Admins only.' }] };

describe('a request the sidecar refuses', () => {
  test('401: the sidecar headers and JSON body reach the caller, exactly once', async () => {
    gw.stubSidecar.handler = (_, res) =>
      sendJson(res, 401, ERROR_401, {
        'WWW-Authenticate': 'Bearer error="invalid_token", ApiKey realm="gateway"',
        'X-jwt-error': 'JWTExpired: "exp" claim timestamp check failed',
      });
    const answer = await https(gw.httpsPort, '/reports', gw.ca, {
      headers: { Authorization: 'Bearer expired' },
    });
    expect(answer.status).toBe(401);
    expect(answer.headers['content-type']).toBe('application/json');
    expect(answer.headers['www-authenticate']).toBe(
      'Bearer error="invalid_token", ApiKey realm="gateway"',
    );
    expect(answer.headers['x-jwt-error']).toBe('JWTExpired: "exp" claim timestamp check failed');
    expect(JSON.parse(answer.body)).toEqual(ERROR_401);
    expect(gw.stubApp.requests).toHaveLength(0);
  });

  test('401 without a body: a JSON body all the same, and no X-jwt-error', async () => {
    gw.stubSidecar.handler = (_, res) => {
      res.writeHead(401, { 'WWW-Authenticate': 'ApiKey realm="gateway"' });
      res.end();
    };
    const answer = await https(gw.httpsPort, '/reports', gw.ca, WITH_CREDENTIAL);
    expect(answer.status).toBe(401);
    expect(answer.headers['x-jwt-error']).toBeUndefined();
    expect(JSON.parse(answer.body).errors[0].code).toBe('UNAUTHORIZED');
    expect(gw.stubApp.requests).toHaveLength(0);
  });

  test("403: the sidecar's JSON body", async () => {
    gw.stubSidecar.handler = (_, res) => sendJson(res, 403, ERROR_403);
    const answer = await https(gw.httpsPort, '/reports', gw.ca, WITH_CREDENTIAL);
    expect(answer.status).toBe(403);
    expect(answer.headers['content-type']).toBe('application/json');
    expect(JSON.parse(answer.body)).toEqual(ERROR_403);
    expect(gw.stubApp.requests).toHaveLength(0);
  });

  test('keep-alive to the sidecar survives refusals, with or without a body', async () => {
    const refuse = (body: string) => (_: SeenRequest, res: ServerResponse) => {
      res.writeHead(401, { 'Content-Length': Buffer.byteLength(body) });
      res.end(body);
    };
    const newConnections = async (body: string) => {
      gw.stubSidecar.handler = refuse(body);
      await https(gw.httpsPort, '/warm-up', gw.ca, WITH_CREDENTIAL);
      const before = gw.stubSidecar.connections;
      for (let i = 0; i < 4; i++)
        expect((await https(gw.httpsPort, '/r', gw.ca, WITH_CREDENTIAL)).status).toBe(401);
      return gw.stubSidecar.connections - before;
    };
    expect(await newConnections('')).toBe(0);
    // The Lua client reads the whole answer, so the connection goes back to the pool.
    expect(await newConnections('{"errors":[]}')).toBe(0);
  });

  test('a sidecar fault (500) becomes a 503 JSON error, never the app', async () => {
    gw.stubSidecar.handler = (_, res) => sendJson(res, 500, { errors: [{ code: 'INTERNAL' }] });
    const answer = await https(gw.httpsPort, '/reports', gw.ca, WITH_CREDENTIAL);
    expect(answer.status).toBe(503);
    expect(JSON.parse(answer.body).errors[0].code).toBe('AUTH_UNAVAILABLE');
    expect(gw.stubApp.requests).toHaveLength(0);
  });
});

describe('failures behind the gateway', () => {
  test('the app failing: 502 JSON, without the app content', async () => {
    gw.stubApp.handler = (_, res) => res.socket?.destroy();
    const answer = await https(gw.httpsPort, '/crash', gw.ca, WITH_CREDENTIAL);
    expect(answer.status).toBe(502);
    expect(answer.headers['content-type']).toBe('application/json');
    expect(JSON.parse(answer.body).errors[0].code).toBe('UPSTREAM_UNAVAILABLE');
  });

  // These two run last and in order: the first stops the stub sidecar, the second restarts it.
  test('the sidecar down: callers get a 503 JSON error, never the app', async () => {
    await gw.stubSidecar.close();
    const answer = await https(gw.httpsPort, '/reports', gw.ca, {
      headers: { Authorization: 'apk 1.x' },
    });
    expect(answer.status).toBe(503);
    expect(answer.headers['content-type']).toBe('application/json');
    expect(JSON.parse(answer.body).errors[0].code).toBe('AUTH_UNAVAILABLE');
    expect(gw.stubApp.requests).toHaveLength(0);
    expect(await gw.nginx.errorLog()).toMatch(/connect\(\) failed \(111: Connection refused\)/);
  });

  test('a restarted sidecar is used again at once (a lone upstream server is never marked down)', async () => {
    gw.stubSidecar = await startStub(allow({ 'X-Client-Id': '7' }), gw.stubSidecar.port);
    const answer = await https(gw.httpsPort, '/reports', gw.ca, WITH_CREDENTIAL);
    expect(answer.status).toBe(200);
    expect(gw.stubApp.requests[0]?.headers['x-client-id']).toBe('7');
  });

  test('a sidecar that speaks HTTP only (an older one, mid-upgrade) is asked in HTTP', async () => {
    await gw.stubSidecar.close();
    gw.stubSidecar = await startStub(allow({ 'X-Client-Id': '8' }), gw.stubSidecar.port, {
      frames: false,
    });
    // nginx has two workers: each finds out for itself.
    for (let i = 0; i < 6; i++) {
      const answer = await https(gw.httpsPort, `/old-${i}`, gw.ca, WITH_CREDENTIAL);
      expect(answer.status).toBe(200);
    }
    expect(gw.stubApp.requests.map((r) => r.headers['x-client-id'])).toEqual(Array(6).fill('8'));
    expect(gw.authCalls().length).toBe(6);
    expect(await gw.nginx.errorLog()).toMatch(/answers HTTP only; asking it in HTTP/);
  });
});
