import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { h2 } from '../support/h2.js';
import { createClient, uniqueName } from '../support/management.js';
import { startNativeStack } from '../support/native-stack.js';
import { moduleHits } from '../support/nginx-control.js';
import { apk } from '../support/sidecar.js';
import { callStack } from '../support/stack-http.js';

// What the application behind the gateway receives. Issue 49: an HTTP/2 caller's seen API key is
// the nginx module's hit, as over HTTP/1.1, and the application receives the same identity.
// Issue 53: no method or URL override header reaches it, and no path it could read as `..`. Real native gateway (nginx, module, sidecar,
// PostgreSQL) in front of a header-recording application of the test's own
// (GATEWAY_APP_UPSTREAM); asserted: nginx's own hit count and the headers the app saw.

type NativeStack = Awaited<ReturnType<typeof startNativeStack>>;
let gw: NativeStack;
let app: Server;
const seen: IncomingHttpHeaders[] = [];

/** What the gateway says of the caller to the application, and nothing per request. */
const identity = (headers: IncomingHttpHeaders) =>
  Object.fromEntries(
    Object.entries(headers).filter(
      ([name]) =>
        name.startsWith('x-client') || name.startsWith('x-gateway') || name === 'authorization',
    ),
  );

beforeAll(async () => {
  app = createServer((req, res) => {
    seen.push(req.headers);
    res.end('ok');
  }).listen(0, '127.0.0.1');
  await once(app, 'listening');
  gw = await startNativeStack({
    env: { GATEWAY_APP_UPSTREAM: `http://127.0.0.1:${(app.address() as AddressInfo).port}` },
  });
}, 240_000);
afterAll(async () => {
  await gw?.close();
  app?.close();
});

describe('a seen API key over HTTP/2', () => {
  test('is a module hit, and the application receives the identity it receives over HTTP/1.1', async () => {
    const key = await createClient(
      gw.baseUrl,
      gw.adminKey,
      { name: uniqueName('h2 client'), is_admin: false, generate_api_key: true },
      { ...(await gw.tls()), connectTo: '127.0.0.1' },
    );
    expect((await callStack(gw, '/orders', { headers: apk(key.token) })).status).toBe(200);
    const tls = await gw.tls();
    const target = {
      port: Number(new URL(gw.baseUrl).port),
      ca: tls.ca,
      servername: tls.servername,
    };

    let before = await moduleHits(gw);
    seen.length = 0;
    expect((await callStack(gw, '/orders', { headers: apk(key.token) })).status).toBe(200);
    expect(await moduleHits(gw)).toBe(before + 1);
    const overHttp1 = seen[0]!;

    before = await moduleHits(gw);
    seen.length = 0;
    const answer = await h2(target, {
      ':method': 'GET',
      ':path': '/orders',
      ':authority': gw.fqdn,
      authorization: `apk ${key.token}`,
    });
    expect(answer).toMatchObject({ kind: 'http', status: 200 });
    expect(await moduleHits(gw)).toBe(before + 1);
    const overHttp2 = seen[0]!;

    expect(identity(overHttp1)['x-client-id']).toBe(String(key.id));
    expect(identity(overHttp2)).toEqual(identity(overHttp1));
    expect(overHttp2.authorization).toBeUndefined();
  });
});

/** The method and URL override headers common stacks act on (docs/managing-clients.md). */
const OVERRIDES = {
  'x-http-method-override': 'DELETE',
  'x-http-method': 'DELETE',
  'x-method-override': 'DELETE',
  'x-original-url': '/admin',
  'x-rewrite-url': '/admin',
  'x-forwarded-host': 'evil.example',
  'x-forwarded-prefix': '/admin',
  forwarded: 'host=evil.example;proto=http',
};

describe('a client allowed only POST /orders/**', () => {
  let token: string;
  beforeAll(async () => {
    ({ token } = await createClient(
      gw.baseUrl,
      gw.adminKey,
      {
        name: uniqueName('orders only'),
        is_admin: false,
        generate_api_key: true,
        permissions: [{ methods: ['POST'], path: '/orders/**' }],
      },
      { ...(await gw.tls()), connectTo: '127.0.0.1' },
    ));
  });

  test('its POST reaches the application as a POST with none of the override headers, first sight and module hit alike', async () => {
    for (let i = 0; i < 3; i += 1) {
      seen.length = 0;
      const res = await callStack(gw, '/orders/7', {
        method: 'POST',
        headers: { ...apk(token), ...OVERRIDES },
      });
      expect(res.status).toBe(200);
      expect(seen).toHaveLength(1);
      for (const name of Object.keys(OVERRIDES)) expect(seen[0]![name], name).toBeUndefined();
    }
  });

  test.each(['/files/..%20', '/files/...', '/files/%C0%AE%C0%AE', '/orders/..%20/x'])(
    '%s is 400 BAD_PATH in the one error shape and never reaches the application',
    async (path) => {
      seen.length = 0;
      const res = await callStack(gw, path, { method: 'POST', headers: apk(token) });
      expect(res.status).toBe(400);
      expect(res.json).toEqual({ errors: [expect.objectContaining({ code: 'BAD_PATH' })] });
      expect(seen).toHaveLength(0);
    },
  );
});
