import { createHash, randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { CONTROL } from '../../../common/contract.js';
import { silentLogger } from '../../../sidecar/log.js';
import { NginxControl } from '../../../sidecar/nginx/control.js';
import { controlRequest } from '../../support/nginx-control.js';
import { type GatewayUnderTest, startGateway } from './support/gateway-harness.js';
import { https } from './support/https-client.js';
import type { SeenRequest } from './support/stub-server.js';
import { sendJson } from './support/stub-server.js';

// The real nginx with key records and failure budgets on, in front of a stub sidecar that
// answers as the real one does (docs/decisions/20261125-miss-path.md): key ids below 100, and
// those in `createdIds`, belong to clients whose secret is secretOf(id); others belong to nobody.
const MAX_AGE_MS = 1_500;
const PER_KEY_ID = 3;
let gw: GatewayUnderTest;
const createdIds = new Set<number>();

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
  if (id >= 100 && !createdIds.has(id)) {
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
  createdIds.clear();
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

describe('a new client announced through the control socket (NginxControl.created)', () => {
  const control = () => new NginxControl(gw.controlSocket, silentLogger);
  let unknownId = 200;

  test('ends "no client has this id" at once: the next request asks the sidecar', async () => {
    const id = unknownId++;
    expect((await get(key(id, wrongSecret()))).status).toBe(401);
    expect((await get(key(id, wrongSecret()))).status).toBe(401);
    expect(gw.authCalls()).toHaveLength(1);
    expect(await control().created([id])).toBe(true);
    expect((await get(key(id, wrongSecret()))).status).toBe(401);
    expect(gw.authCalls()).toHaveLength(2);
  });

  test('keeps what was learnt about the new client itself: its key passes without asking', async () => {
    const id = freshId();
    expect((await get(key(id))).status).toBe(200);
    // The creation's notice reaching nginx after the key's first request (LISTEN is
    // asynchronous): before, it was a revocation and the next request asked again.
    expect(await control().created([id])).toBe(true);
    for (let i = 0; i < 3; i += 1) expect((await get(key(id))).status).toBe(200);
    expect((await get(key(id, wrongSecret()))).status).toBe(401);
    expect(gw.authCalls()).toHaveLength(1);
    // A change of the client, by contrast, ends everything learnt about it.
    expect(await control().clients([id])).toBe(true);
    expect((await get(key(id))).status).toBe(200);
    expect(gw.authCalls()).toHaveLength(2);
  });

  test('an "unknown" answer to a question asked before the notice is not kept', async () => {
    const id = unknownId++;
    let answered = () => {};
    const slow = new Promise<void>((resolve) => {
      answered = resolve;
    });
    gw.stubSidecar.handler = (seen, res) => {
      // Held until the notice is in: the answer arrives after it, about a question before it.
      void slow.then(() => realisticSidecar(seen, res));
    };
    const first = get(key(id, wrongSecret()));
    for (let tries = 0; tries < 100 && gw.authCalls().length < 1; tries += 1) await sleep(10);
    expect(gw.authCalls()).toHaveLength(1);
    expect(await control().created([id])).toBe(true);
    answered();
    expect((await first).status).toBe(401);
    gw.stubSidecar.handler = realisticSidecar;
    expect((await get(key(id, wrongSecret()))).status).toBe(401);
    expect(gw.authCalls()).toHaveLength(2);
  });

  test("starts the id's failure budget again: guesses made before the client existed do not meet its first callers", async () => {
    const id = unknownId++;
    for (let i = 0; i < PER_KEY_ID; i += 1) {
      expect((await get(key(id, wrongSecret()))).status).toBe(401);
    }
    expect((await get(key(id, wrongSecret()))).status).toBe(429);
    expect(gw.authCalls()).toHaveLength(1);
    createdIds.add(id);
    expect(await control().created([id])).toBe(true);
    // The owner's first requests arrive together, before any record of the new client: each
    // asks (before, one took the budget's one question a second and the others met 429).
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    gw.stubSidecar.handler = (seen, res) => {
      void held.then(() => realisticSidecar(seen, res));
    };
    let answered = 0;
    const first = [0, 1, 2].map(() =>
      get(key(id)).then((res) => {
        answered += 1;
        return res.status;
      }),
    );
    for (let tries = 0; tries < 200 && gw.authCalls().length + answered < 4; tries += 1) {
      await sleep(10);
    }
    release();
    expect(await Promise.all(first)).toEqual([200, 200, 200]);
    expect(gw.authCalls()).toHaveLength(4);
    // Guesses after the creation count afresh, against the new client.
    for (let i = 0; i < PER_KEY_ID; i += 1) {
      expect((await get(key(id, wrongSecret()))).status).toBe(401);
    }
    expect((await get(key(id, wrongSecret()))).status).toBe(429);
    expect((await get(key(id))).status).toBe(200);
  });

  test('a body that is not row ids is refused whole (400 in the one shape), marking nothing', async () => {
    const id = unknownId++;
    expect((await get(key(id, wrongSecret()))).status).toBe(401);
    const res = await controlRequest(gw, CONTROL.created, 'POST', `${id},x`);
    expect(res.status).toBe(400);
    expect(JSON.parse(res.text).errors[0].code).toBe('BAD_REQUEST');
    expect((await get(key(id, wrongSecret()))).status).toBe(401);
    expect(gw.authCalls()).toHaveLength(1);
    expect((await controlRequest(gw, CONTROL.created, 'GET', String(id))).status).toBe(405);
  });
});

describe('an answer that arrives long after a revocation', () => {
  test('is never kept past the marker: a deleted key is not passed again once the marker ends', async () => {
    // Something kept first: markers then live max_age_ms and a second (before anything was
    // kept, an hour).
    expect((await get(key(freshId()))).status).toBe(200);
    gw.reset();
    const id = freshId();
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    gw.stubSidecar.handler = (seen, res) => void held.then(() => realisticSidecar(seen, res));
    const first = get(key(id));
    for (let tries = 0; tries < 100 && gw.authCalls().length < 1; tries += 1) await sleep(10);
    expect(gw.authCalls()).toHaveLength(1);
    // Deleted while the question is in flight; the marker lives max_age_ms and a second.
    const deletedAt = Date.now();
    expect(await new NginxControl(gw.controlSocket, silentLogger).clients([id])).toBe(true);
    // The answer, read before the delete, comes two seconds later (within the question's 3 s
    // timeout): the caller asked first and passes, but what it says may not be kept.
    await sleep(2_000);
    release();
    expect((await first).status).toBe(200);
    // From now on the sidecar knows no such client.
    gw.stubSidecar.handler = (seen, res) => {
      const asked = String(seen.headers.authorization ?? '').replace(/^apk [0-9]+\./, 'apk 100.');
      realisticSidecar({ ...seen, headers: { ...seen.headers, authorization: asked } }, res);
    };
    // Past the marker's end (1.5 + 1 s after it was set), before the end of a record counted
    // from the answer's arrival (1.5 s after it): such a record would pass the key unasked.
    await sleep(Math.max(0, deletedAt + MAX_AGE_MS + 1_000 + 400 - Date.now()));
    expect((await get(key(id))).status).toBe(401);
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
