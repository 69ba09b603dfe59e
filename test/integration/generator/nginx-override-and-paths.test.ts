import { createHash } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { moduleHits as moduleHitsOf } from '../../support/nginx-control.js';
import { type GatewayUnderTest, startGateway } from './support/gateway-harness.js';
import { https } from './support/https-client.js';
import type { SeenRequest } from './support/stub-server.js';

// Issue 53 (docs/decisions/20261201-override-headers-and-dot-segments.md), through the real
// nginx, Lua and module: the app never gets a method or URL override header, and a path with a
// dots-and-spaces segment or non-UTF-8 bytes once decoded is 400 BAD_PATH and never reaches it,
// for a key the module decides (its record learnt) and for one seen the first time (Lua's).
let gw: GatewayUnderTest;
const secretOf = (id: number) => createHash('sha256').update(`secret ${id}`).digest('base64url');
const hex = (text: string) => createHash('sha256').update(text).digest('hex');
const key = (id: number) => `apk ${id}.${secretOf(id)}`;

function sidecar(seen: SeenRequest, res: ServerResponse): void {
  const id = Number(/^apk ([0-9]+)\./.exec(String(seen.headers.authorization ?? ''))?.[1]);
  res.writeHead(204, {
    'X-Gateway-Key-Record': 'known',
    'X-Gateway-Client-Row': String(id),
    'X-Gateway-Key-Hash': hex(secretOf(id)),
    'X-Client-Id': String(id),
    'X-Client-Name': `client%20${id}`,
    'X-Client-Is-Admin': 'false',
    'X-Auth-Method': 'apk',
  });
  res.end();
}

beforeAll(async () => {
  gw = await startGateway({ settings: { auth_cache: { max_age_ms: 60_000 } } });
});
afterAll(() => gw?.stop());
beforeEach(() => {
  gw.reset();
  gw.stubSidecar.handler = sidecar;
});

const moduleHits = () => moduleHitsOf(gw);

let nextId = 5000;
/** A key seen for the first time (Lua decides), or one whose record the module holds. */
async function keyFor(kind: 'first sight' | 'module hit'): Promise<string> {
  const authorization = key(nextId++);
  if (kind === 'module hit') {
    expect((await https(gw.httpsPort, '/warm', gw.ca, { headers: { authorization } })).status).toBe(
      200,
    );
    const before = await moduleHits();
    expect((await https(gw.httpsPort, '/warm', gw.ca, { headers: { authorization } })).status).toBe(
      200,
    );
    expect(await moduleHits()).toBe(before + 1);
    gw.reset();
    gw.stubSidecar.handler = sidecar;
  }
  return authorization;
}

const OVERRIDES = [
  'x-http-method-override',
  'x-http-method',
  'x-method-override',
  'x-original-url',
  'x-rewrite-url',
  'x-forwarded-host',
  'x-forwarded-prefix',
  'forwarded',
];
const BAD_PATHS = ['/files/..%20', '/files/...', '/files/%C0%AE%C0%AE'];

for (const kind of ['first sight', 'module hit'] as const) {
  describe(`a ${kind} key`, () => {
    test('the app gets none of the override headers', async () => {
      const authorization = await keyFor(kind);
      const headers: Record<string, string> = { authorization };
      for (const name of OVERRIDES) headers[name] = name === 'forwarded' ? 'host=evil' : 'DELETE';
      const res = await https(gw.httpsPort, '/orders/1', gw.ca, {
        method: 'POST',
        headers,
        body: '{}',
      });
      expect(res.status).toBe(200);
      expect(gw.stubApp.requests).toHaveLength(1);
      const seen = gw.stubApp.requests[0]!;
      expect(seen.method).toBe('POST');
      for (const name of OVERRIDES) expect(seen.headers[name], name).toBeUndefined();
    });

    test.each(BAD_PATHS)('%s is 400 BAD_PATH and never reaches the app', async (path) => {
      const authorization = await keyFor(kind);
      const res = await https(gw.httpsPort, path, gw.ca, { headers: { authorization } });
      expect(res.status).toBe(400);
      expect(JSON.parse(res.body).errors[0].code).toBe('BAD_PATH');
      expect(gw.stubApp.requests).toHaveLength(0);
    });
  });
}
