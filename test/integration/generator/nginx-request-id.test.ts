import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { http } from '../../support/http.js';
import { type GatewayUnderTest, startGateway } from './support/gateway-harness.js';

// request_id.trusted_proxies through the real nginx: the id a trusted peer (here 127.0.0.1, as
// a balancer would be) sends is kept on every hop; any other peer, or a malformed id, gets
// nginx's own. Loopback takes any 127.x source address, so 127.0.0.2 is an untrusted caller.
let gw: GatewayUnderTest;

beforeAll(async () => {
  gw = await startGateway({ settings: { request_id: { trusted_proxies: ['127.0.0.1/32'] } } });
});
afterAll(() => gw?.stop());

let n = 0;
const NGINX_ID = /^[0-9a-f]{32}$/;

/** A GET with a fresh credential from `from`, carrying these headers. */
async function get(from: string, headers: Record<string, string>) {
  const res = await http(`https://localhost:${gw.httpsPort}/data`, {
    headers: { Authorization: `apk ${++n}.${'k'.repeat(43)}`, ...headers },
    tls: { ca: gw.ca, servername: 'localhost', localAddress: from },
    connectTo: '127.0.0.1',
  });
  expect(res.status).toBe(200);
  return res.headers['x-request-id'];
}

/** The id the sidecar and the app saw, for the one request since reset(). */
const seen = () => [
  ...gw.authCalls().map((c) => c.headers['x-request-id']),
  ...gw.stubApp.requests.map((r) => r.headers['x-request-id']),
];

describe('a trusted X-Request-Id', () => {
  test("a trusted peer's id is answered and reaches the sidecar and the app", async () => {
    gw.reset();
    const id = 'B1C2D3E4-0A1B-4C2D-9E8F-0123456789AB.lb-1_x';
    expect(await get('127.0.0.1', { 'X-Request-Id': id })).toBe(id);
    expect(seen()).toEqual([id, id]);
  });

  test('a trusted peer without an id gets nginx’s own', async () => {
    gw.reset();
    const id = await get('127.0.0.1', {});
    expect(id).toMatch(NGINX_ID);
    expect(seen()).toEqual([id, id]);
  });

  test.each([
    ['a space', 'a b'],
    ['65 characters', 'x'.repeat(65)],
    ['a quote', 'id"x'],
    ['a comma', 'a,b'],
    ['a dollar sign', '$request_id'],
  ])('a trusted peer’s id with %s is replaced', async (_, sent) => {
    gw.reset();
    const id = await get('127.0.0.1', { 'X-Request-Id': sent });
    expect(id).toMatch(NGINX_ID);
    expect(seen()).toEqual([id, id]);
  });

  test('another peer cannot choose the id, not even by naming a trusted one in X-Forwarded-For', async () => {
    gw.reset();
    const id = await get('127.0.0.2', { 'X-Request-Id': 'chosen', 'X-Forwarded-For': '127.0.0.1' });
    expect(id).toMatch(NGINX_ID);
    expect(seen()).toEqual([id, id]);
  });
});
