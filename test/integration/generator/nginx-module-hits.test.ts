import { createHash } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { connect } from 'node:tls';
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { CONTROL } from '../../../common/contract.js';
import { controlPost, moduleHits as moduleHitsOf } from '../../support/nginx-control.js';
import { type GatewayUnderTest, startGateway } from './support/gateway-harness.js';
import { https } from './support/https-client.js';
import type { SeenRequest } from './support/stub-server.js';
import { sendJson } from './support/stub-server.js';

// The nginx module (docs/decisions/20261125-hit-in-c.md) on what it reads from learnt key
// records: the real nginx, Lua and module in front of a stub sidecar that answers with key
// records as the real one does, and a stub app that shows what it was sent. Which side decided
// is read from nginx's own counter (module_hit: the module's "yes").
const MAX_AGE_MS = 6_000;
let gw: GatewayUnderTest;

const secretOf = (id: number) => createHash('sha256').update(`secret ${id}`).digest('base64url');
const hex = (text: string) => createHash('sha256').update(text).digest('hex');
const INVALID = { errors: [{ code: 'INVALID_API_KEY', message: 'The API key is not valid.' }] };

/** What the stub sidecar says about a client beyond its current secret. */
interface Client {
  name?: string;
  /** Unix seconds from which the client is expired. */
  expiresAt?: number;
  /** A rotated-out secret and the end of its grace (Unix seconds). */
  previous?: { secret: string; until: number };
}
const clients = new Map<number, Client>();

function sidecar(seen: SeenRequest, res: ServerResponse): void {
  const match = /^apk ([0-9]+)\.(.+)$/.exec(String(seen.headers.authorization ?? ''));
  const id = Number(match?.[1]);
  const client = clients.get(id);
  if (!match || !client) {
    sendJson(res, 401, INVALID, { 'WWW-Authenticate': 'apk' });
    return;
  }
  const now = Date.now() / 1000;
  const record: Record<string, string> = {
    'X-Gateway-Key-Record': 'known',
    'X-Gateway-Client-Row': String(id),
    'X-Gateway-Key-Hash': hex(secretOf(id)),
    'X-Client-Id': String(id),
    'X-Client-Name': client.name ?? `client%20${id}`,
    'X-Client-Is-Admin': 'false',
    'X-Auth-Method': 'apk',
  };
  if (client.expiresAt !== undefined) record['X-Gateway-Expires-At'] = String(client.expiresAt);
  if (client.previous) {
    record['X-Gateway-Previous-Key-Hash'] = hex(client.previous.secret);
    record['X-Gateway-Previous-Key-Until'] = String(client.previous.until);
  }
  const current = match[2] === secretOf(id);
  const previous = client.previous;
  const inGrace = previous !== undefined && previous.secret === match[2] && now < previous.until;
  const expired = client.expiresAt !== undefined && now >= client.expiresAt;
  if ((current || inGrace) && !expired) {
    res.writeHead(204, record);
    res.end();
  } else {
    sendJson(res, 401, INVALID, { ...record, 'WWW-Authenticate': 'apk' });
  }
}

beforeAll(async () => {
  gw = await startGateway({ settings: { auth_cache: { max_age_ms: MAX_AGE_MS } } });
});
afterAll(() => gw?.stop());
beforeEach(() => {
  gw.reset();
  gw.stubSidecar.handler = sidecar;
});

let nextId = 1000;
function newClient(client: Client = {}): number {
  const id = nextId++;
  clients.set(id, client);
  return id;
}
const key = (id: number, secret = secretOf(id)) => `apk ${id}.${secret}`;
const get = (authorization: string, headers: Record<string, string> = {}) =>
  https(gw.httpsPort, '/data', gw.ca, { headers: { Authorization: authorization, ...headers } });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const moduleHits = () => moduleHitsOf(gw);

/** The requests' statuses, and how many of them the module passed. */
async function decided(calls: (() => Promise<{ status: number }>)[]) {
  const before = await moduleHits();
  const statuses: number[] = [];
  for (const call of calls) statuses.push((await call()).status);
  return { statuses, moduleHits: (await moduleHits()) - before };
}

describe('a record the module holds, as time passes', () => {
  test("a client's expiry: passed by the module until it, then 401 by Lua, no module hit", async () => {
    const id = newClient({ expiresAt: Math.floor(Date.now() / 1000) + 2 });
    expect(await decided([() => get(key(id)), () => get(key(id))])).toEqual({
      statuses: [200, 200],
      moduleHits: 1,
    });
    await sleep(2_200);
    const after = await decided([() => get(key(id))]);
    expect(after).toEqual({ statuses: [401], moduleHits: 0 });
  });

  test("a rotated-out secret's grace end: passed by the module within it, then 401 by Lua", async () => {
    const old = 'o'.repeat(43);
    const id = newClient({ previous: { secret: old, until: Math.floor(Date.now() / 1000) + 2 } });
    expect(await decided([() => get(key(id, old)), () => get(key(id, old))])).toEqual({
      statuses: [200, 200],
      moduleHits: 1,
    });
    await sleep(2_200);
    expect(await decided([() => get(key(id, old))])).toEqual({ statuses: [401], moduleHits: 0 });
    // The current secret still passes through the module.
    expect(await decided([() => get(key(id))])).toEqual({ statuses: [200], moduleHits: 1 });
  });

  test('a record past half its life: passed by Lua, which refreshes it; then the module again', async () => {
    const id = newClient();
    expect(await decided([() => get(key(id)), () => get(key(id))])).toEqual({
      statuses: [200, 200],
      moduleHits: 1,
    });
    await sleep(MAX_AGE_MS / 2 + 200);
    const asked = gw.authCalls().length;
    expect(await decided([() => get(key(id))])).toEqual({ statuses: [200], moduleHits: 0 });
    // Lua asked the sidecar again for a fresh record (at once or just after its answer).
    for (let i = 0; i < 50 && gw.authCalls().length === asked; i += 1) await sleep(20);
    expect(gw.authCalls().length).toBe(asked + 1);
    expect(await decided([() => get(key(id))])).toEqual({ statuses: [200], moduleHits: 1 });
  });
});

describe('what the module leaves to Lua', () => {
  test('after invalidate-all the next request is Lua’s (asked again), the one after the module’s', async () => {
    const id = newClient();
    expect(await decided([() => get(key(id)), () => get(key(id))])).toEqual({
      statuses: [200, 200],
      moduleHits: 1,
    });
    expect(await controlPost(gw, CONTROL.invalidateAll)).toBe(204);
    const asked = gw.authCalls().length;
    expect(await decided([() => get(key(id))])).toEqual({ statuses: [200], moduleHits: 0 });
    expect(gw.authCalls().length).toBe(asked + 1);
    expect(await decided([() => get(key(id))])).toEqual({ statuses: [200], moduleHits: 1 });
  });

  test('a record over 2 KB (a very long client name): every request Lua’s, and 200', async () => {
    const id = newClient({ name: 'n'.repeat(2_100) });
    const result = await decided([() => get(key(id)), () => get(key(id)), () => get(key(id))]);
    expect(result).toEqual({ statuses: [200, 200, 200], moduleHits: 0 });
    expect(gw.stubApp.requests.at(-1)?.headers['x-client-name']).toBe('n'.repeat(2_100));
  });

  test('a seen key with a 1,100-byte header (nginx’s large header buffers): Lua’s, and 200', async () => {
    const id = newClient();
    expect((await get(key(id))).status).toBe(200);
    const big = { 'X-Big': 'b'.repeat(1_100) };
    expect(await decided([() => get(key(id), big)])).toEqual({ statuses: [200], moduleHits: 0 });
    expect(gw.stubApp.requests.at(-1)?.headers['x-big']).toBe('b'.repeat(1_100));
  });
});

describe('a module hit', () => {
  test('identity headers the caller sent are replaced by the gateway’s before the app sees them', async () => {
    const id = newClient();
    expect((await get(key(id))).status).toBe(200);
    const forged = {
      'X-Client-Id': 'forged',
      'X-Client-Name': 'forged',
      'X-Client-Is-Admin': 'true',
      'X-Auth-Method': 'forged',
    };
    expect(await decided([() => get(key(id), forged)])).toEqual({
      statuses: [200],
      moduleHits: 1,
    });
    const seen = gw.stubApp.requests.at(-1)!.headers;
    expect([
      seen['x-client-id'],
      seen['x-client-name'],
      seen['x-client-is-admin'],
      seen['x-auth-method'],
    ]).toEqual([String(id), `client%20${id}`, 'false', 'apk']);
  });

  test('pipelined: three requests in one write on one connection, each passed by the module', async () => {
    const id = newClient();
    expect((await get(key(id))).status).toBe(200);
    const one = `GET /data HTTP/1.1\r\nHost: localhost\r\nAuthorization: ${key(id)}\r\n\r\n`;
    const before = await moduleHits();
    const statuses = await pipelined(
      `${one}${one}${one.replace('\r\n\r\n', '\r\nConnection: close\r\n\r\n')}`,
    );
    expect(statuses).toEqual([200, 200, 200]);
    expect((await moduleHits()) - before).toBe(3);
    expect(gw.stubApp.requests.slice(-3).map((r) => r.headers['x-client-id'])).toEqual(
      Array(3).fill(String(id)),
    );
  });
});

/** Writes `bytes` at once on a TLS connection and reads until nginx closes it: the statuses. */
function pipelined(bytes: string): Promise<number[]> {
  return new Promise((resolve, reject) => {
    const socket = connect({
      host: '127.0.0.1',
      port: gw.httpsPort,
      ca: gw.ca,
      servername: 'localhost',
    });
    let text = '';
    socket.setTimeout(10_000, () => socket.destroy(new Error('no answer')));
    socket.on('secureConnect', () => socket.write(bytes));
    socket.on('data', (chunk: Buffer) => {
      text += chunk.toString('latin1');
    });
    socket.on('error', reject);
    socket.on('close', () =>
      resolve([...text.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((m) => Number(m[1]))),
    );
  });
}
