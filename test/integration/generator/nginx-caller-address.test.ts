import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { http } from '../../support/http.js';
import { type GatewayUnderTest, startGateway } from './support/gateway-harness.js';
import { sendJson } from './support/stub-server.js';

// The caller's address behind a balancer through the real nginx
// (docs/decisions/20261127-caller-address-behind-a-balancer.md): with request_id.trusted_proxies
// listing the peer (127.0.0.1 here, as a balancer would be), realip takes the caller's address
// from X-Forwarded-For; it is what the app gets and what the per-address failure budget counts.
// Any other peer's X-Forwarded-For, and every one without trusted proxies, is ignored. Loopback
// takes any 127.x source address, so 127.0.0.2 is an untrusted peer.
const PER_ADDRESS = 3;
const budget = { per_key_id: 0, per_address: PER_ADDRESS, window_s: 60 };
let trusting: GatewayUnderTest;
let plain: GatewayUnderTest;

beforeAll(async () => {
  [trusting, plain] = await Promise.all([
    startGateway({
      settings: { request_id: { trusted_proxies: ['127.0.0.1/32'] }, failure_budget: budget },
    }),
    startGateway({ settings: { failure_budget: budget } }),
  ]);
});
afterAll(async () => {
  await trusting?.stop();
  await plain?.stop();
});

let n = 0;

/** A GET with a fresh credential from the peer `from`, carrying these headers: the answer. */
function get(gw: GatewayUnderTest, from: string, headers: Record<string, string> = {}) {
  return http(`https://localhost:${gw.httpsPort}/data`, {
    headers: { Authorization: `apk ${++n}.${'k'.repeat(43)}`, ...headers },
    tls: { ca: gw.ca, servername: 'localhost', localAddress: from },
    connectTo: '127.0.0.1',
  });
}

/** The X-Forwarded-For the app got for a request from `from` with these headers. */
async function forwardedToApp(
  gw: GatewayUnderTest,
  from: string,
  headers: Record<string, string> = {},
): Promise<unknown> {
  gw.reset();
  const res = await get(gw, from, headers);
  expect(res.status).toBe(200);
  expect(gw.stubApp.requests).toHaveLength(1);
  return gw.stubApp.requests[0]!.headers['x-forwarded-for'];
}

/** The sidecar refuses every credential (no key record: each failure asks it again). */
function refuseAll(gw: GatewayUnderTest): void {
  gw.reset();
  gw.stubSidecar.handler = (_, res) =>
    sendJson(
      res,
      401,
      { errors: [{ code: 'INVALID_API_KEY', message: 'The API key is not valid.' }] },
      { 'WWW-Authenticate': 'apk' },
    );
}

/** The statuses of `count` wrong credentials, each from `from` with these headers. */
async function failures(
  gw: GatewayUnderTest,
  count: number,
  from: string,
  headers: (i: number) => Record<string, string> = () => ({}),
): Promise<number[]> {
  const statuses: number[] = [];
  for (let i = 0; i < count; i += 1) statuses.push((await get(gw, from, headers(i))).status);
  return statuses;
}

const refusedThenLimited = [...Array(PER_ADDRESS).fill(401), 429];

describe('a trusted peer names the caller', () => {
  test.each([
    ['one address', '203.0.113.7', '203.0.113.7'],
    [
      'the rightmost of several (what the balancer saw)',
      '198.51.100.1, 203.0.113.7',
      '203.0.113.7',
    ],
    ['past listed proxies (recursive)', '203.0.113.7, 127.0.0.1', '203.0.113.7'],
    ['an IPv6 caller', '2001:db8::7', '2001:db8::7'],
  ])('the app gets the caller’s address: %s', async (_, sent, caller) => {
    expect(await forwardedToApp(trusting, '127.0.0.1', { 'X-Forwarded-For': sent })).toBe(caller);
  });

  test('without X-Forwarded-For, or with one that is no address, the peer is the caller', async () => {
    expect(await forwardedToApp(trusting, '127.0.0.1')).toBe('127.0.0.1');
    expect(await forwardedToApp(trusting, '127.0.0.1', { 'X-Forwarded-For': 'unknown' })).toBe(
      '127.0.0.1',
    );
  });

  test('an untrusted peer’s X-Forwarded-For is ignored, even naming a trusted address', async () => {
    for (const sent of ['203.0.113.7', '127.0.0.1', '203.0.113.7, 127.0.0.1']) {
      expect(await forwardedToApp(trusting, '127.0.0.2', { 'X-Forwarded-For': sent })).toBe(
        '127.0.0.2',
      );
    }
  });

  test('the request id is still trusted by the peer, not by the forwarded address', async () => {
    trusting.reset();
    const id = 'balancer-id-1';
    const kept = await get(trusting, '127.0.0.1', {
      'X-Request-Id': id,
      'X-Forwarded-For': '203.0.113.7',
    });
    expect(kept.headers['x-request-id']).toBe(id);
    const replaced = await get(trusting, '127.0.0.2', {
      'X-Request-Id': id,
      'X-Forwarded-For': '127.0.0.1',
    });
    expect(replaced.headers['x-request-id']).toMatch(/^[0-9a-f]{32}$/);
  });
});

describe('the per-address failure budget counts per caller behind a trusted peer', () => {
  test("a caller's failures spend its own budget; another caller through the same peer is still asked", async () => {
    refuseAll(trusting);
    const caller = { 'X-Forwarded-For': '203.0.113.7' };
    expect(await failures(trusting, PER_ADDRESS + 1, '127.0.0.1', () => caller)).toEqual(
      refusedThenLimited,
    );
    const limited = await get(trusting, '127.0.0.1', caller);
    expect(limited.status).toBe(429);
    expect(JSON.parse(limited.text).errors[0].code).toBe('TOO_MANY_FAILED_ATTEMPTS');
    // The same balancer, other callers (and the balancer's own address): not limited.
    expect((await get(trusting, '127.0.0.1', { 'X-Forwarded-For': '203.0.113.8' })).status).toBe(
      401,
    );
    expect((await get(trusting, '127.0.0.1')).status).toBe(401);
    // Only 203.0.113.7's budget is spent: the sidecar said yes, yet nginx did not ask it.
    trusting.reset();
    expect((await get(trusting, '127.0.0.1', caller)).status).toBe(429);
    expect(trusting.authCalls()).toHaveLength(0);
    expect((await get(trusting, '127.0.0.1', { 'X-Forwarded-For': '203.0.113.9' })).status).toBe(
      200,
    );
  }, 30_000);

  test('an untrusted peer spends its own budget whatever X-Forwarded-For it sends', async () => {
    refuseAll(trusting);
    const rotating = (i: number) => ({ 'X-Forwarded-For': `198.51.100.${i + 1}` });
    expect(await failures(trusting, PER_ADDRESS + 1, '127.0.0.2', rotating)).toEqual(
      refusedThenLimited,
    );
  }, 30_000);
});

describe('no trusted proxies: X-Forwarded-For is ignored', () => {
  test('the app gets the peer’s address', async () => {
    expect(await forwardedToApp(plain, '127.0.0.1', { 'X-Forwarded-For': '203.0.113.7' })).toBe(
      '127.0.0.1',
    );
  });

  test('every failure spends the peer’s budget, whatever address it names', async () => {
    refuseAll(plain);
    const rotating = (i: number) => ({ 'X-Forwarded-For': `203.0.113.${i + 1}` });
    expect(await failures(plain, PER_ADDRESS + 1, '127.0.0.3', rotating)).toEqual(
      refusedThenLimited,
    );
  }, 30_000);
});
