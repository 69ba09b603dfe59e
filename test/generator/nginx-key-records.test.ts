import { createHash, randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { type GatewayUnderTest, startGateway } from './support/gateway-harness.js';
import { https } from './support/https-client.js';
import type { SeenRequest } from './support/stub-server.js';
import { sendJson } from './support/stub-server.js';

// The real nginx with key records and failure budgets on, in front of a stub sidecar that
// answers as the real one does (docs/decisions/20261125-miss-path.md): key ids below 100 belong
// to clients whose secret is secretOf(id); others belong to nobody.
const MAX_AGE_MS = 1_500;
const PER_KEY_ID = 3;
let gw: GatewayUnderTest;

const secretOf = (id: number) => createHash('sha256').update(`secret ${id}`).digest('base64url');
const wrongSecret = () => randomBytes(32).toString('base64url');
const sha256Hex = (text: string) => createHash('sha256').update(text).digest('hex');
const INVALID = { errors: [{ code: 'INVALID_API_KEY', message: 'The API key is not valid.' }] };

/** The real sidecar's /auth for API keys, key record included. */
function realisticSidecar(seen: SeenRequest, res: ServerResponse): void {
  const match = /^apk ([0-9]+)\.(.+)$/.exec(String(seen.headers.authorization ?? ''));
  if (!match) {
    sendJson(res, 401, { errors: [{ code: 'MALFORMED_CREDENTIALS', message: 'no' }] });
    return;
  }
  const id = Number(match[1]);
  if (id >= 100) {
    sendJson(res, 401, INVALID, {
      'WWW-Authenticate': 'apk',
      'X-Gateway-Key-Record': 'unknown',
      'X-Gateway-Client-Row': String(id),
    });
    return;
  }
  const record = {
    'X-Gateway-Key-Record': 'known',
    'X-Gateway-Client-Row': String(id),
    'X-Gateway-Key-Hash': sha256Hex(secretOf(id)),
    'X-Client-Id': String(id),
    'X-Client-Name': `client%20${id}`,
    'X-Client-Is-Admin': 'false',
    'X-Auth-Method': 'apk',
  };
  if (match[2] === secretOf(id)) {
    res.writeHead(204, record);
    res.end();
  } else {
    sendJson(res, 401, INVALID, { ...record, 'WWW-Authenticate': 'apk' });
  }
}

beforeAll(async () => {
  gw = await startGateway({
    settings: {
      auth_cache: { max_age_ms: MAX_AGE_MS },
      failure_budget: { per_key_id: PER_KEY_ID, per_address: 0, window_s: 60 },
    },
  });
});
afterAll(() => gw?.stop());
beforeEach(() => {
  gw.reset();
  gw.stubSidecar.handler = realisticSidecar;
});

let nextId = 1;
const freshId = () => nextId++;
const get = (authorization?: string) =>
  https(gw.httpsPort, '/data', gw.ca, {
    headers: authorization === undefined ? {} : { Authorization: authorization },
  });
const key = (id: number, secret = secretOf(id)) => `apk ${id}.${secret}`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('key records', () => {
  test('the first answer about a key id decides the later ones, right secret or wrong, without asking', async () => {
    const id = freshId();
    expect((await get(key(id))).status).toBe(200);
    for (let i = 0; i < 5; i += 1) expect((await get(key(id))).status).toBe(200);
    const wrong = await get(key(id, wrongSecret()));
    expect(wrong.status).toBe(401);
    expect(JSON.parse(wrong.body)).toEqual(INVALID);
    expect(wrong.headers['www-authenticate']).toBe('apk');
    expect(gw.authCalls()).toHaveLength(1);
    // The identity from the record reaches the app.
    expect(gw.stubApp.requests.map((r) => r.headers['x-client-name'])).toEqual(
      Array(6).fill(`client%20${id}`),
    );
  });

  test('an id no client has is remembered as such', async () => {
    expect((await get(key(150, wrongSecret()))).status).toBe(401);
    expect((await get(key(150, wrongSecret()))).status).toBe(401);
    expect(gw.authCalls()).toHaveLength(1);
  });

  test('a record about another id, or a damaged one, is not kept: the sidecar is asked again', async () => {
    const id = freshId();
    gw.stubSidecar.handler = (_, res) => {
      res.writeHead(204, {
        'X-Gateway-Key-Record': 'known',
        'X-Gateway-Client-Row': String(id),
        'X-Gateway-Key-Hash': 'not-a-hash',
        'X-Client-Id': String(id),
        'X-Client-Is-Admin': 'false',
        'X-Auth-Method': 'apk',
      });
      res.end();
    };
    expect((await get(key(id))).status).toBe(200);
    expect((await get(key(id))).status).toBe(200);
    // Without a record the "yes" itself is cached, as from a sidecar that sends none.
    expect(gw.authCalls()).toHaveLength(1);
    // Another credential is another question (this stub says yes to anything).
    expect((await get(key(id, wrongSecret()))).status).toBe(200);
    expect(gw.authCalls()).toHaveLength(2);
  });

  test('a request without credentials is refused by nginx: the sidecar is not asked', async () => {
    const res = await get();
    expect(res.status).toBe(401);
    expect(JSON.parse(res.body).errors[0].code).toBe('MISSING_CREDENTIALS');
    expect(res.headers['www-authenticate']).toBe('apk');
    expect(gw.authCalls()).toHaveLength(0);
  });

  test('a pooled connection the sidecar closed while idle is asked again on a new one', async () => {
    expect((await get(key(freshId()))).status).toBe(200);
    await gw.stubSidecar.dropConnections();
    expect((await get(key(freshId()))).status).toBe(200);
    expect(gw.authCalls()).toHaveLength(2);
  });
});

describe('a record in use is learnt again before it expires', () => {
  test('the request that finds it half way through its life refreshes it behind: no miss at its end', async () => {
    const id = freshId();
    const named = (name: string) => (seen: SeenRequest, res: ServerResponse) => {
      realisticSidecar(seen, {
        writeHead: (status: number, headers: Record<string, string>) =>
          res.writeHead(status, { ...headers, 'X-Client-Name': name }),
        end: () => res.end(),
      } as unknown as ServerResponse);
    };
    const learnt = Date.now();
    gw.stubSidecar.handler = named('v1');
    expect((await get(key(id))).status).toBe(200);
    await sleep(MAX_AGE_MS / 2 + 200);
    gw.stubSidecar.handler = named('v2');
    // Decided from the record learnt first (v1); a refresh is asked in the background.
    expect((await get(key(id))).status).toBe(200);
    for (let tries = 0; tries < 100 && gw.authCalls().length < 2; tries += 1) await sleep(20);
    expect(gw.authCalls()).toHaveLength(2);
    // Past the first record's end: the refreshed one (v2) decides, not a question (it would say v3).
    await sleep(Math.max(0, learnt + MAX_AGE_MS + 200 - Date.now()));
    gw.stubSidecar.handler = named('v3');
    expect((await get(key(id))).status).toBe(200);
    expect(gw.stubApp.requests.map((r) => r.headers['x-client-name'])).toEqual(['v1', 'v1', 'v2']);
  });
});

describe('failure budgets', () => {
  test('past the key id budget: 429 with Retry-After, asking no one; the right key still passes', async () => {
    const id = freshId();
    expect((await get(key(id))).status).toBe(200);
    for (let i = 0; i < PER_KEY_ID; i += 1) {
      expect((await get(key(id, wrongSecret()))).status).toBe(401);
    }
    const limited = await get(key(id, wrongSecret()));
    expect(limited.status).toBe(429);
    expect(JSON.parse(limited.body).errors[0].code).toBe('TOO_MANY_FAILED_ATTEMPTS');
    expect(Number(limited.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(gw.authCalls()).toHaveLength(1);
    expect((await get(key(id))).status).toBe(200);
    // Another id is not limited by this one's budget.
    expect((await get(key(freshId(), wrongSecret()))).status).toBe(401);
  });

  test('an attacked id whose record expired gets one question a second, so its owner keeps passing', async () => {
    const id = freshId();
    expect((await get(key(id))).status).toBe(200);
    for (let i = 0; i < PER_KEY_ID; i += 1) await get(key(id, wrongSecret()));
    await sleep(MAX_AGE_MS + 300);
    // The record is gone and the budget spent: this one may ask (and brings the record back)...
    expect((await get(key(id, wrongSecret()))).status).toBe(401);
    expect(gw.authCalls()).toHaveLength(2);
    // ...the next wrong one in the same second may not...
    expect((await get(key(id, wrongSecret()))).status).toBe(429);
    expect(gw.authCalls()).toHaveLength(2);
    // ...and the owner's key passes from the record again.
    expect((await get(key(id))).status).toBe(200);
  });
});
