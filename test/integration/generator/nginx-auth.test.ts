import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { allow, type GatewayUnderTest, startGateway } from './support/gateway-harness.js';
import { https } from './support/https-client.js';
import { sendJson } from './support/stub-server.js';

// A request without credentials is refused by nginx itself; these ask the stub sidecar.
const STUB_CREDENTIAL = { Authorization: 'Bearer stub-token' };
const WITH_CREDENTIAL = { headers: STUB_CREDENTIAL };

// The real nginx with the rendered default.conf in front of a stub sidecar and a stub app:
// what reaches the sidecar, what reaches the app, and where /v1/management/ goes.

let gw: GatewayUnderTest;

beforeAll(async () => {
  gw = await startGateway({
    settings: {
      open_id_connect_enabled: true,
      open_id_connect: {
        discovery: 'https://idp.example.test/.well-known/openid-configuration',
        client_name_claim: 'name',
        audience: 'gateway-tests',
      },
    },
  });
});
afterAll(async () => {
  await gw?.stop();
});
beforeEach(() => gw.reset());

describe('the auth subrequest', () => {
  test('carries the toggles, OIDC options, method and URI from default.conf, not from the caller', async () => {
    await https(gw.httpsPort, '/orders/7?expand=lines', gw.ca, {
      method: 'POST',
      headers: {
        Authorization: 'apk 12.secret',
        'Content-Type': 'application/json',
        'X-Gateway-Api-Keys-Enabled': 'false',
        'X-Gateway-Oidc-Accept-None-Alg': 'true',
        'X-Original-URI': '/v1/management/api-clients/',
      },
      body: '{"quantity":3}',
    });
    const [auth] = gw.authCalls();
    expect(auth?.method).toBe('GET');
    expect(auth?.headers).toMatchObject({
      authorization: 'apk 12.secret',
      'x-gateway-api-keys-enabled': 'true',
      'x-gateway-oidc-enabled': 'true',
      'x-gateway-oidc-discovery': 'https://idp.example.test/.well-known/openid-configuration',
      'x-gateway-oidc-ssl-verify': 'yes',
      'x-gateway-oidc-accept-unsupported-alg': 'false',
      'x-gateway-oidc-accept-none-alg': 'false',
      'x-gateway-oidc-client-id-claim': 'sub',
      'x-gateway-oidc-client-name-claim': 'name',
      'x-gateway-oidc-audience': 'gateway-tests',
      'x-original-method': 'POST',
      'x-original-uri': '/orders/7?expand=lines',
    });
    // An empty redirect_uri is not sent at all: the sidecar reads that as its default, "".
    expect(auth?.headers['x-gateway-oidc-redirect-uri']).toBeUndefined();
    expect(auth?.body).toBe('');
    expect(auth?.headers['content-length']).toBeUndefined();
    expect(gw.stubApp.requests[0]?.body).toBe('{"quantity":3}');
  });
});

describe('a request the sidecar allows', () => {
  test('reaches the app with the identity from the sidecar, never the caller-sent one', async () => {
    gw.stubSidecar.handler = allow({
      'X-Client-Id': '42',
      'X-Client-Name': 'Ada%20Lovelace',
      'X-Client-Is-Admin': 'false',
      'X-Auth-Method': 'apk',
    });
    const answer = await https(gw.httpsPort, '/reports', gw.ca, {
      headers: {
        Authorization: 'apk 42.secret',
        'X-Client-Id': '1',
        'X-Client-Name': 'root',
        'X-Client-Is-Admin': 'true',
        'X-Auth-Method': 'forged',
        'X-Forwarded-For': '203.0.113.9',
        'X-Forwarded-Proto': 'http',
      },
    });
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.body)).toEqual({ app: true, url: '/reports' });
    expect(gw.stubApp.requests[0]?.headers).toMatchObject({
      'x-client-id': '42',
      'x-client-name': 'Ada%20Lovelace',
      'x-client-is-admin': 'false',
      'x-auth-method': 'apk',
      'x-forwarded-for': '127.0.0.1',
      'x-forwarded-proto': 'https',
    });
    // The credential was for the gateway: the app never sees the key or token.
    expect(gw.stubApp.requests[0]?.headers.authorization).toBeUndefined();
    expect(gw.authCalls()[0]?.headers.authorization).toBe('apk 42.secret');
  });

  test('a "yes" that names nobody is refused: fail closed, and the app is never called', async () => {
    gw.stubSidecar.handler = (_, res) => {
      res.writeHead(204);
      res.end();
    };
    const answer = await https(gw.httpsPort, '/reports', gw.ca, {
      headers: { ...STUB_CREDENTIAL, 'X-Client-Id': '1', 'X-Client-Is-Admin': 'true' },
    });
    expect(answer.status).toBe(503);
    expect(JSON.parse(answer.body).errors[0].code).toBe('AUTH_UNAVAILABLE');
    expect(gw.stubApp.requests).toHaveLength(0);
  });

  test('reuses keep-alive connections to the sidecar and the app', async () => {
    const before = { sidecar: gw.stubSidecar.connections, app: gw.stubApp.connections };
    for (let i = 0; i < 6; i++)
      expect((await https(gw.httpsPort, `/k/${i}`, gw.ca, WITH_CREDENTIAL)).status).toBe(200);
    expect(gw.authCalls()).toHaveLength(6);
    expect(gw.stubSidecar.connections - before.sidecar).toBeLessThanOrEqual(1);
    expect(gw.stubApp.connections - before.app).toBeLessThanOrEqual(1);
  });

  test("passes the app's own 401 through untouched", async () => {
    gw.stubApp.handler = (_, res) => sendJson(res, 401, { app: 'says no' });
    const answer = await https(gw.httpsPort, '/private', gw.ca, WITH_CREDENTIAL);
    expect(answer.status).toBe(401);
    expect(JSON.parse(answer.body)).toEqual({ app: 'says no' });
  });
});

describe('/v1/management/', () => {
  test('goes to the sidecar, after auth, with identity, toggles and the body', async () => {
    gw.stubSidecar.handler = (seen, res) => {
      if (seen.url === '/auth')
        allow({ 'X-Client-Id': '1', 'X-Client-Is-Admin': 'true' })(seen, res);
      else sendJson(res, 201, { api_key_id: 2 });
    };
    const answer = await https(gw.httpsPort, '/v1/management/api-clients', gw.ca, {
      method: 'POST',
      headers: {
        ...STUB_CREDENTIAL,
        'Content-Type': 'application/json',
        'X-Client-Is-Admin': 'forged',
      },
      body: '{"name":"ci"}',
    });
    expect(answer.status).toBe(201);
    expect(gw.stubSidecar.requests.map((r) => `${r.method} ${r.url}`)).toEqual([
      'GET /auth',
      'POST /v1/management/api-clients',
    ]);
    const management = gw.stubSidecar.requests[1];
    expect(management?.body).toBe('{"name":"ci"}');
    expect(management?.headers).toMatchObject({
      'x-client-id': '1',
      'x-client-is-admin': 'true',
      'x-gateway-api-keys-enabled': 'true',
      'x-gateway-oidc-enabled': 'true',
      'x-gateway-oidc-audience': 'gateway-tests',
      'x-original-uri': '/v1/management/api-clients',
      'x-forwarded-proto': 'https',
    });
    expect(gw.stubApp.requests).toHaveLength(0);
  });

  test('a refusal stops at nginx: the management route is never called', async () => {
    const body = JSON.stringify({ errors: [{ code: 'FORBIDDEN', message: 'Admins only.' }] });
    gw.stubSidecar.handler = (_, res) => sendJson(res, 403, JSON.parse(body));
    const answer = await https(gw.httpsPort, '/v1/management/api-clients/', gw.ca, WITH_CREDENTIAL);
    expect(answer.status).toBe(403);
    expect(answer.body).toBe(body);
    expect(gw.stubSidecar.requests.map((r) => r.url)).toEqual(['/auth']);
  });
});
