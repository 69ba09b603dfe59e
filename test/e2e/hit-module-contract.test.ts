import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { Agent } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { h2Raw } from '../support/h2-raw.js';
import { type HttpOptions, http } from '../support/http.js';
import { createClient, uniqueName } from '../support/management.js';
import type { NativeGatewayProcess } from '../support/native-gateway.js';
import { startNativeStack } from '../support/native-stack.js';
import { controlPost, moduleHits } from '../support/nginx-control.js';
import { exchange, type RawTarget } from '../support/raw-tls.js';
import { apk } from '../support/sidecar.js';
import type { Stack } from '../support/stack.js';

// The nginx module's contract (docs/decisions/20261125-hit-in-c.md, "The contract"): it never
// refuses, never overturns the Lua code, never passes what Lua would refuse. A native gateway
// with the key table's replica off, so that nginx learns key records from the sidecar's answers
// (the module's other source of a "yes"), and a small per-address failure budget. Which side
// decided is read from nginx's own counter (module_hit counts the module's "yes").

type NativeStack = Stack & { home: string; gateway: () => NativeGatewayProcess };
let gw: NativeStack;
let scratch: string;
const PER_ADDRESS = 2;
/** Loopback takes any 127.x source: two callers with budgets of their own. */
const ATTACKER = '127.0.0.3';
const TEACHER = '127.0.0.4';

beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'gw-e2e-contract-'));
  const settings = join(scratch, 'gateway.yaml');
  await writeFile(
    settings,
    [
      'key_table:',
      '  enabled: false',
      'failure_budget:',
      `  per_address: ${PER_ADDRESS}`,
      '  window_s: 3600',
      '',
    ].join('\n'),
  );
  gw = await startNativeStack({ env: { GATEWAY_SETTINGS: settings } });
}, 240_000);
afterAll(async () => {
  await gw?.close();
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

/** A request from the loopback address `peer`. */
async function from(peer: string, path: string, options: HttpOptions = {}) {
  return http(`${gw.baseUrl}${path}`, {
    ...options,
    tls: { ...(await gw.tls()), localAddress: peer },
    connectTo: '127.0.0.1',
    timeoutMs: 30_000,
  });
}
const call = (key: string, path = '/api') => from('127.0.0.1', path, { headers: apk(key) });
const hits = () => moduleHits(gw);

async function newKey(): Promise<{ id: number; token: string }> {
  return createClient(
    gw.baseUrl,
    gw.adminKey,
    { name: uniqueName('contract'), is_admin: false, generate_api_key: true },
    { ...(await gw.tls()), connectTo: '127.0.0.1' },
  );
}

/** A key id no client has: the sidecar is asked, and refuses (a failure of the caller's). */
const unknownKey = () =>
  `${900_000_000 + Math.floor(Math.random() * 1_000_000)}.${randomBytes(32).toString('base64url')}`;

describe('the module decides once per request: it never overturns Lua', () => {
  // lua-nginx-module resumes a paused access handler (ngx.sleep in the 429 tarpit, a wait on
  // the sidecar) by running the access phase's handler again, which is the module's. If the
  // key was learnt meanwhile, a module deciding again would pass a request Lua had answered
  // 429, and Lua's count of paused requests (at most 512 a worker) would never come down.
  test('a caller past its per-address budget keeps its 429 while another caller teaches nginx its key; the tarpit still holds after 1,200 such requests', async () => {
    for (let i = 0; i <= PER_ADDRESS; i += 1) {
      expect((await from(ATTACKER, '/api', { headers: apk(unknownKey()) })).status).toBe(
        i < PER_ADDRESS ? 401 : 429,
      );
    }
    const { id, token } = await newKey();
    const ROUNDS = 12;
    const BATCH = 100;
    // The attacker's connections are opened first (a first batch, tarpitted too) and kept: a
    // round's requests then all reach nginx, and pause, before the teacher asks (a request
    // that came after would pass by right, its key known to be right by then).
    const agent = new Agent({ ...(await gw.tls()), localAddress: ATTACKER, keepAlive: true });
    const attack = () =>
      Promise.all(
        Array.from({ length: BATCH }, () => from(ATTACKER, '/api', { headers: apk(token), agent })),
      );
    expect(new Set((await attack()).map((r) => r.status))).toEqual(new Set([429]));
    for (let round = 0; round < ROUNDS; round += 1) {
      // What nginx learnt in the round before is dead: the attacker's requests are Lua's.
      expect(await controlPost(gw, '/invalidate', String(id))).toBe(204);
      const paused = attack();
      await new Promise((r) => setTimeout(r, 400));
      const before = await hits();
      expect((await from(TEACHER, '/api', { headers: apk(token) })).status).toBe(200);
      const statuses = (await paused).map((r) => r.status);
      expect(statuses.filter((s) => s !== 429)).toEqual([]);
      expect(await hits()).toBe(before);
    }
    // Every paused request came back to Lua and left the tarpit: the next one still waits.
    expect(await controlPost(gw, '/invalidate', String(id))).toBe(204);
    const started = Date.now();
    expect((await from(ATTACKER, '/api', { headers: apk(token) })).status).toBe(429);
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
    agent.destroy();
    // And the teacher's key passes through the module once learnt.
    expect((await call(token)).status).toBe(200);
    const before = await hits();
    expect((await call(token)).status).toBe(200);
    expect(await hits()).toBe(before + 1);
  }, 120_000);
});

async function target(): Promise<RawTarget> {
  const tls = await gw.tls();
  return { port: Number(new URL(gw.baseUrl).port), ca: tls.ca, servername: tls.servername };
}

/** One raw HTTP/1.1 request with `key` and `extra` header lines: its status. */
async function rawHttp1(key: string, extra: string): Promise<number> {
  const bytes = Buffer.from(
    `GET /api HTTP/1.1\r\nHost: ${gw.fqdn}\r\nAuthorization: apk ${key}\r\n${extra}Connection: close\r\n\r\n`,
    'latin1',
  );
  const answer = await exchange(await target(), bytes);
  return answer.kind === 'http' ? answer.status : -1;
}

/** One HTTP/2 request with `key` and one more field, written as sent: its status. */
async function rawHttp2(key: string, name: string): Promise<number> {
  const answer = await h2Raw(await target(), [
    [':method', 'GET'],
    [':scheme', 'https'],
    [':path', '/api'],
    [':authority', gw.fqdn],
    ['authorization', `apk ${key}`],
    [name, '1'],
  ]);
  return 'status' in answer ? answer.status : -1;
}

// nginx drops header lines whose names it does not take (anything but letters, digits and `-`,
// as underscores_in_headers is off) without refusing the request, over HTTP/1 and HTTP/2 alike
// (the module's comments and decision record said it refused them). Both screens must answer
// such a request as the other does: 200, the line never reaching the app. Each row: a fresh
// key, its first request decided by Lua (the key not yet learnt), the second by whichever the
// module leaves it to. Over HTTP/2 the module passes it (nginx kept only the fields it took);
// over HTTP/1 it leaves it to Lua: a dropped line keeps its colon and CR in nginx's buffer,
// without the NULs nginx writes into the lines it keeps, so the module's screen cannot tell
// where its value ends.
describe('header names nginx drops without a word: the module and Lua answer alike', () => {
  test.each([
    ['HTTP/1', 'X.A', 0],
    ['HTTP/1', 'X_A', 0],
    ['HTTP/1', 'X!A', 0],
    ['HTTP/2', 'x(a', 1],
    ['HTTP/2', 'x.a', 1],
    ['HTTP/2', 'x_a', 1],
    ['HTTP/2', 'x\xffa', 1],
  ])(
    '%s, a header named %j: 200 from Lua, then 200 (module hits: %i)',
    async (version, name, moduleHits) => {
      const { token } = await newKey();
      const send = () =>
        version === 'HTTP/1' ? rawHttp1(token, `${name}: 1\r\n`) : rawHttp2(token, name);
      let before = await hits();
      expect(await send()).toBe(200);
      expect(await hits()).toBe(before);
      before = await hits();
      expect(await send()).toBe(200);
      expect(await hits()).toBe(before + moduleHits);
    },
  );
});
