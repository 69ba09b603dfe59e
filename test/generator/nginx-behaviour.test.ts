import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer as createTlsServer } from 'node:tls';
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { ensureConfigDir, LAYOUT, loadSettings } from '../../generator/index.js';
import { freePort } from '../support/embedded-postgres.js';
import { handshake, http, https } from './support/https-client.js';
import { type RunningNginx, startNginx } from './support/nginx.js';
import { type SeenRequest, type StubServer, sendJson, startStub } from './support/stub-server.js';

// The real nginx in front of a stub sidecar and a stub app (the real sidecar is tested
// end to end elsewhere): what the rendered default.conf and ssl.conf make nginx do.

let home: string;
let configDir: string;
let ca: string;
let httpsPort: number;
let httpPort: number;
let stubSidecar: StubServer;
let stubApp: StubServer;
let nginx: RunningNginx;

const ERROR_401 = { errors: [{ code: 'INVALID_TOKEN', message: 'The token has expired.' }] };
const ERROR_403 = { errors: [{ code: 'FORBIDDEN', message: 'Admins only.' }] };

function allow(identity: Record<string, string>) {
  return (_: SeenRequest, res: import('node:http').ServerResponse) => {
    res.writeHead(204, identity);
    res.end();
  };
}

const appEcho = (seen: SeenRequest, res: import('node:http').ServerResponse) =>
  sendJson(res, 200, { app: true, url: seen.url });

const authCalls = () => stubSidecar.requests.filter((r) => r.url === '/auth');

beforeAll(async () => {
  home = await mkdtemp(join(tmpdir(), 'gw-behaviour-'));
  configDir = join(home, 'config');
  stubSidecar = await startStub(allow({}));
  stubApp = await startStub(appEcho);
  httpsPort = await freePort();
  httpPort = await freePort();
  const settings = await loadSettings({
    overrides: {
      fqdn: 'localhost',
      https_port: httpsPort,
      http_redirect_port: httpPort,
      config_dir: configDir,
      upstreams: {
        app: `127.0.0.1:${stubApp.port}`,
        sidecar: `127.0.0.1:${stubSidecar.port}`,
      },
      open_id_connect_enabled: true,
      open_id_connect: {
        discovery: 'https://idp.example.test/.well-known/openid-configuration',
        client_name_claim: 'name',
        audience: 'gateway-tests',
      },
    },
  });
  await ensureConfigDir(configDir, settings);
  ca = await readFile(join(configDir, LAYOUT.certificate), 'utf8');
  nginx = await startNginx(configDir, httpsPort);
});

afterAll(async () => {
  await nginx?.stop();
  await stubSidecar?.close();
  await stubApp?.close();
  await rm(home, { recursive: true, force: true });
});

beforeEach(() => {
  stubSidecar.requests.length = 0;
  stubApp.requests.length = 0;
  stubSidecar.handler = allow({});
  stubApp.handler = appEcho;
});

describe('the auth subrequest', () => {
  test('carries the toggles, OIDC options, method and URI from default.conf, not from the caller', async () => {
    await https(httpsPort, '/orders/7?expand=lines', ca, {
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
    const [auth] = authCalls();
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
    expect(stubApp.requests[0]?.body).toBe('{"quantity":3}');
  });
});

describe('a request the sidecar allows', () => {
  test('reaches the app with the identity from the sidecar, never the caller-sent one', async () => {
    stubSidecar.handler = allow({
      'X-Client-Id': '42',
      'X-Client-Name': 'Ada%20Lovelace',
      'X-Client-Is-Admin': 'false',
      'X-Auth-Method': 'apk',
    });
    const answer = await https(httpsPort, '/reports', ca, {
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
    expect(stubApp.requests[0]?.headers).toMatchObject({
      'x-client-id': '42',
      'x-client-name': 'Ada%20Lovelace',
      'x-client-is-admin': 'false',
      'x-auth-method': 'apk',
      'x-forwarded-for': '127.0.0.1',
      'x-forwarded-proto': 'https',
    });
  });

  test('drops caller-sent identity headers even when the sidecar sends none', async () => {
    const answer = await https(httpsPort, '/reports', ca, {
      headers: { 'X-Client-Id': '1', 'X-Client-Is-Admin': 'true' },
    });
    expect(answer.status).toBe(200);
    expect(stubApp.requests[0]?.headers['x-client-id']).toBeUndefined();
    expect(stubApp.requests[0]?.headers['x-client-is-admin']).toBeUndefined();
  });

  test('reuses keep-alive connections to the sidecar and the app', async () => {
    const before = { sidecar: stubSidecar.connections, app: stubApp.connections };
    for (let i = 0; i < 6; i++) expect((await https(httpsPort, `/k/${i}`, ca)).status).toBe(200);
    expect(authCalls()).toHaveLength(6);
    expect(stubSidecar.connections - before.sidecar).toBeLessThanOrEqual(1);
    expect(stubApp.connections - before.app).toBeLessThanOrEqual(1);
  });

  test("passes the app's own 401 through untouched", async () => {
    stubApp.handler = (_, res) => sendJson(res, 401, { app: 'says no' });
    const answer = await https(httpsPort, '/private', ca);
    expect(answer.status).toBe(401);
    expect(JSON.parse(answer.body)).toEqual({ app: 'says no' });
  });

  test('answers 502 JSON when the app fails, without the app content', async () => {
    stubApp.handler = (_, res) => res.socket?.destroy();
    const answer = await https(httpsPort, '/crash', ca);
    expect(answer.status).toBe(502);
    expect(answer.headers['content-type']).toBe('application/json');
    expect(JSON.parse(answer.body).errors[0].code).toBe('UPSTREAM_UNAVAILABLE');
  });
});

describe('a request the sidecar refuses', () => {
  test('401: the sidecar headers and JSON body survive into the error_page named location', async () => {
    stubSidecar.handler = (_, res) => {
      const body = JSON.stringify(ERROR_401);
      sendJson(res, 401, ERROR_401, {
        'WWW-Authenticate': 'Bearer error="invalid_token", ApiKey realm="gateway"',
        'X-jwt-error': 'JWTExpired: "exp" claim timestamp check failed',
        'X-Auth-Error-Body': body,
      });
    };
    const answer = await https(httpsPort, '/reports', ca, {
      headers: { Authorization: 'Bearer expired' },
    });
    expect(answer.status).toBe(401);
    expect(answer.headers['content-type']).toBe('application/json');
    // Exactly once: auth_request copies it, the named location must not add it again.
    expect(answer.headers['www-authenticate']).toBe(
      'Bearer error="invalid_token", ApiKey realm="gateway"',
    );
    expect(answer.headers['x-jwt-error']).toBe('JWTExpired: "exp" claim timestamp check failed');
    expect(JSON.parse(answer.body)).toEqual(ERROR_401);
    expect(stubApp.requests).toHaveLength(0);
  });

  test('401 without X-Auth-Error-Body: a JSON body all the same, and no X-jwt-error', async () => {
    stubSidecar.handler = (_, res) => {
      res.writeHead(401, { 'WWW-Authenticate': 'ApiKey realm="gateway"' });
      res.end();
    };
    const answer = await https(httpsPort, '/reports', ca);
    expect(answer.status).toBe(401);
    expect(answer.headers['x-jwt-error']).toBeUndefined();
    expect(JSON.parse(answer.body).errors[0].code).toBe('UNAUTHORIZED');
    expect(stubApp.requests).toHaveLength(0);
  });

  test('403: the JSON body from X-Auth-Error-Body', async () => {
    stubSidecar.handler = (_, res) =>
      sendJson(res, 403, ERROR_403, { 'X-Auth-Error-Body': JSON.stringify(ERROR_403) });
    const answer = await https(httpsPort, '/reports', ca);
    expect(answer.status).toBe(403);
    expect(answer.headers['content-type']).toBe('application/json');
    expect(JSON.parse(answer.body)).toEqual(ERROR_403);
    expect(stubApp.requests).toHaveLength(0);
  });

  test('a sidecar fault (500) becomes a 503 JSON error, never the app', async () => {
    stubSidecar.handler = (_, res) => sendJson(res, 500, { errors: [{ code: 'INTERNAL' }] });
    const answer = await https(httpsPort, '/reports', ca);
    expect(answer.status).toBe(503);
    expect(JSON.parse(answer.body).errors[0].code).toBe('AUTH_UNAVAILABLE');
    expect(stubApp.requests).toHaveLength(0);
  });
});

describe('/v1/management/', () => {
  test('goes to the sidecar, after auth, with identity, toggles and the body', async () => {
    stubSidecar.handler = (seen, res) => {
      if (seen.url === '/auth')
        allow({ 'X-Client-Id': '1', 'X-Client-Is-Admin': 'true' })(seen, res);
      else sendJson(res, 201, { api_key_id: 2 });
    };
    const answer = await https(httpsPort, '/v1/management/api-clients', ca, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-Client-Is-Admin': 'forged' },
      body: '{"name":"ci"}',
    });
    expect(answer.status).toBe(201);
    expect(stubSidecar.requests.map((r) => `${r.method} ${r.url}`)).toEqual([
      'GET /auth',
      'POST /v1/management/api-clients',
    ]);
    const management = stubSidecar.requests[1];
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
    expect(stubApp.requests).toHaveLength(0);
  });

  test('a refusal stops at nginx: the management route is never called', async () => {
    stubSidecar.handler = (_, res) =>
      sendJson(res, 403, ERROR_403, { 'X-Auth-Error-Body': JSON.stringify(ERROR_403) });
    const answer = await https(httpsPort, '/v1/management/api-clients/', ca);
    expect(answer.status).toBe(403);
    expect(stubSidecar.requests.map((r) => r.url)).toEqual(['/auth']);
  });
});

describe('transport', () => {
  test('plain HTTP only redirects to HTTPS, asking no one', async () => {
    const answer = await http(httpPort, '/reports?year=2026');
    expect(answer.status).toBe(308);
    expect(answer.headers.location).toBe(`https://localhost:${httpsPort}/reports?year=2026`);
    expect(stubSidecar.requests).toHaveLength(0);
    expect(stubApp.requests).toHaveLength(0);
  });

  test('the client used below can speak TLS 1.0 and 1.1 when a server allows them', async () => {
    const key = await readFile(join(configDir, LAYOUT.key), 'utf8');
    const server = createTlsServer(
      { key, cert: ca, minVersion: 'TLSv1', ciphers: 'DEFAULT@SECLEVEL=0' },
      (s) => s.end(),
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as import('node:net').AddressInfo).port;
    try {
      expect(await handshake(port, 'TLSv1', ca)).toMatchObject({ ok: true, protocol: 'TLSv1' });
      expect(await handshake(port, 'TLSv1.1', ca)).toMatchObject({ ok: true, protocol: 'TLSv1.1' });
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  test('by default TLS 1.0 and 1.1 are refused, 1.2 and 1.3 accepted', async () => {
    expect(await handshake(httpsPort, 'TLSv1', ca)).toMatchObject({ ok: false });
    expect(await handshake(httpsPort, 'TLSv1.1', ca)).toMatchObject({ ok: false });
    expect(await handshake(httpsPort, 'TLSv1.2', ca)).toMatchObject({
      ok: true,
      protocol: 'TLSv1.2',
    });
    expect(await handshake(httpsPort, 'TLSv1.3', ca)).toMatchObject({
      ok: true,
      protocol: 'TLSv1.3',
    });
  });

  test('serves the generated certificate (CN and SAN = FQDN) and offers HTTP/2', async () => {
    const result = await handshake(httpsPort, 'TLSv1.3', ca);
    if (!result.ok) throw new Error(result.error);
    expect(result.certificate.subject.CN).toBe('localhost');
    expect(result.certificate.subjectaltname).toBe('DNS:localhost');
    expect(result.alpn).toBe('h2');
  });
});

// Last: it stops the stub sidecar for good.
describe('the sidecar down', () => {
  test('callers get a 503 JSON error, never the app', async () => {
    await stubSidecar.close();
    const answer = await https(httpsPort, '/reports', ca, {
      headers: { Authorization: 'apk 1.x' },
    });
    expect(answer.status).toBe(503);
    expect(answer.headers['content-type']).toBe('application/json');
    expect(JSON.parse(answer.body).errors[0].code).toBe('AUTH_UNAVAILABLE');
    expect(stubApp.requests).toHaveLength(0);
    expect(await nginx.errorLog()).toContain('auth request unexpected status: 502');
  });
});
