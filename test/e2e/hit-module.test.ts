import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { CONTROL, NGINX_MODULE } from '../../common/contract.js';
import { h2 } from '../support/h2.js';
import { h2Raw } from '../support/h2-raw.js';
import { http } from '../support/http.js';
import { CLIENTS, createClient, uniqueName } from '../support/management.js';
import { sample } from '../support/metrics-text.js';
import type { NativeGatewayProcess } from '../support/native-gateway.js';
import { startNativeStack } from '../support/native-stack.js';
import { controlPost, moduleHits as moduleHitsIn } from '../support/nginx-control.js';
import { startProviderForGateway } from '../support/oidc-gateway-env.js';
import type { TestOidcProvider } from '../support/oidc-provider.js';
import { exchange, type RawTarget } from '../support/raw-tls.js';
import { apk } from '../support/sidecar.js';
import type { Stack } from '../support/stack.js';
import { callStack } from '../support/stack-http.js';

// The gateway's nginx module (nginx-module/, docs/decisions/20261125-hit-in-c.md) through a real
// native gateway: it passes a seen API key in `location /` without entering Lua, and leaves
// everything else, whatever it is, to the Lua access code, which decides as before. Which of the
// two decided is read from nginx's own counters (module_hit counts the module's "yes").

type NativeStack = Stack & { home: string; gateway: () => NativeGatewayProcess };
let gw: NativeStack;
let provider: TestOidcProvider;
let scratch: string;
/** The OpenID Connect client ids with an API client of their own. */
const BEARER_CLIENTS = ['svc-module', 'svc-module-doomed', 'svc-module-limited'];
/** A limit long enough that a test's requests all fall in one window (see inOneWindow). */
const HOUR_LIMIT = (requests: number) => ({ requests, per_seconds: 3600 });

/** A location added by hand to default.conf: it never says `gateway_hit on;`. */
const HAND_ADDED = '/hand-added/';

beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'gw-e2e-module-'));
  const started = await startProviderForGateway(scratch, BEARER_CLIENTS);
  provider = started.provider;
  gw = await startNativeStack({ env: started.env });
  const conf = join(gw.home, 'config/nginx/conf.d/default.conf');
  const text = await readFile(conf, 'utf8');
  // Beside the public server's `location /` (the one that says `gateway_hit on;`; the control
  // server has a `location /` too).
  const at = text.lastIndexOf('    location / {\n', text.indexOf(`${NGINX_MODULE.directive} on;`));
  expect(at).toBeGreaterThan(0);
  await writeFile(
    conf,
    `${text.slice(0, at)}    location ${HAND_ADDED} {\n        proxy_pass http://gateway_app/;\n    }\n\n${text.slice(at)}`,
  );
  await gw.restart();
  for (const id of BEARER_CLIENTS) {
    const res = await settled(() =>
      callStack(gw, CLIENTS, {
        method: 'POST',
        headers: apk(gw.adminKey),
        json: {
          name: `${id} client`,
          is_admin: false,
          generate_api_key: false,
          api_client_id: id,
          ...(id.endsWith('-limited') ? { rate_limit: HOUR_LIMIT(3) } : {}),
        },
      }),
    );
    expect(res.status, res.text).toBe(201);
  }
}, 240_000);
afterAll(async () => {
  await gw?.close();
  await provider?.stop();
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

const bearer = (token: string, path = '/api') =>
  callStack(gw, path, { headers: { Authorization: `Bearer ${token}` } });
const call = (key: string | null, path = '/api', method = 'GET') =>
  callStack(gw, path, { method, headers: key === null ? {} : apk(key) });

/** Changes of API clients the sidecar has pushed to nginx so far (acknowledged). */
async function pushes(): Promise<number> {
  const res = await http(`${gw.gateway().metricsUrl}/metrics`);
  return sample(res.text, 'gateway_revocation_push_lag_seconds_count');
}

/**
 * Runs a change of one API client (a create, a rotation, a delete) and waits until the sidecar
 * has pushed its notice to nginx. Each change is one notice and one count. A rotation's or a
 * delete's notice marks the client in nginx's revocation markers: if it landed after the next
 * request had learnt the key's record, that record would be dead on arrival, and the request
 * after it would go back to Lua (2026-11-27 in CI: 4 module hits out of 5, then from creates,
 * whose notice now ends only an unknown id). Creates are waited for too, so that every change
 * in this file goes through here and no earlier notice can arrive late and stand in for this one.
 */
async function settled<T>(change: () => Promise<T>): Promise<T> {
  const before = await pushes();
  const result = await change();
  const deadline = Date.now() + 10_000;
  while ((await pushes()) <= before) {
    if (Date.now() > deadline) throw new Error("the change's notice never reached nginx");
    await new Promise((r) => setTimeout(r, 20));
  }
  return result;
}

async function newKey(
  admin = false,
  rateLimit?: { requests: number; per_seconds: number },
): Promise<{ id: number; token: string }> {
  const tls = { ...(await gw.tls()), connectTo: '127.0.0.1' };
  return settled(() =>
    createClient(
      gw.baseUrl,
      gw.adminKey,
      {
        name: uniqueName('module'),
        is_admin: admin,
        generate_api_key: true,
        ...(rateLimit ? { rate_limit: rateLimit } : {}),
      },
      tls,
    ),
  );
}

/** The hits the module passed so far (its own count of its "yes"). */
const moduleHits = () => moduleHitsIn(gw);

async function target(): Promise<RawTarget> {
  const tls = await gw.tls();
  return { port: Number(new URL(gw.baseUrl).port), ca: tls.ca, servername: tls.servername };
}

/** One raw HTTP/1.1 request with a seen key and `extra` header lines; its status. */
async function raw(token: string, extra: string, version = 'HTTP/1.1'): Promise<number> {
  const bytes = Buffer.from(
    `GET /api ${version}\r\nHost: ${gw.fqdn}\r\nAuthorization: apk ${token}\r\n${extra}Connection: close\r\n\r\n`,
    'latin1',
  );
  const answer = await exchange(await target(), bytes);
  return answer.kind === 'http' ? answer.status : -1;
}

describe('a seen API key in location /', () => {
  test('is passed by the module, and its identity reaches the app', async () => {
    const { token } = await newKey();
    expect((await call(token)).status).toBe(200); // the first: asked, record learnt (Lua)
    const before = await moduleHits();
    for (let i = 0; i < 5; i += 1) expect((await call(token)).status).toBe(200);
    expect((await moduleHits()) - before).toBe(5);
  });

  test('a wrong secret for a seen id is refused (by Lua), and counts no module hit', async () => {
    const { id, token } = await newKey();
    expect((await call(token)).status).toBe(200);
    const before = await moduleHits();
    const wrong = await call(`${id}.${'W'.repeat(43)}`);
    expect(wrong.status).toBe(401);
    expect(wrong.json).toEqual({ errors: [expect.objectContaining({ code: 'INVALID_API_KEY' })] });
    expect(await moduleHits()).toBe(before);
  });

  test('a deleted key is refused on the very next request', async () => {
    const { id, token } = await newKey();
    for (let i = 0; i < 3; i += 1) expect((await call(token)).status).toBe(200);
    const before = await moduleHits();
    expect((await call(token)).status).toBe(200);
    expect(await moduleHits()).toBe(before + 1);
    expect((await settled(() => call(gw.adminKey, `${CLIENTS}/${id}`, 'DELETE'))).status).toBe(200);
    expect((await call(token)).status).toBe(401);
  });

  test('after a rotation with grace both secrets pass (the old one through its grace), and without grace the old one is refused at once', async () => {
    const { id, token: old } = await newKey();
    expect((await call(old)).status).toBe(200);
    const rotate = (grace: number) =>
      settled(() =>
        callStack(gw, `${CLIENTS}/${id}/rotate`, {
          method: 'POST',
          headers: apk(gw.adminKey),
          json: { grace_period_seconds: grace },
        }),
      );
    const rotated = await rotate(300);
    expect(rotated.status).toBe(200);
    const fresh = (rotated.json as { token: string }).token;
    expect((await call(fresh)).status).toBe(200); // learns the record with both hashes
    const before = await moduleHits();
    for (let i = 0; i < 3; i += 1) {
      expect((await call(old)).status).toBe(200);
      expect((await call(fresh)).status).toBe(200);
    }
    expect((await moduleHits()) - before).toBe(6);
    const again = await rotate(0);
    expect(again.status).toBe(200);
    const newest = (again.json as { token: string }).token;
    expect((await call(fresh)).status).toBe(401);
    expect((await call(newest)).status).toBe(200);
  });
});

describe('a seen bearer token in location /', () => {
  test("is passed by the module from the decision cache (the Lua code's keyed hash, its key handed over)", async () => {
    const token = await provider.issueToken('svc-module');
    expect((await bearer(token)).status).toBe(200); // the first: verified by the sidecar, cached
    const before = await moduleHits();
    for (let i = 0; i < 5; i += 1) expect((await bearer(token)).status).toBe(200);
    expect((await moduleHits()) - before).toBe(5);
  });

  test('a token one character off is refused (by Lua and the sidecar), with X-jwt-error', async () => {
    const token = await provider.issueToken('svc-module');
    expect((await bearer(token)).status).toBe(200);
    const before = await moduleHits();
    const forged = await bearer(`${token.slice(0, -2)}${token.endsWith('A') ? 'B' : 'A'}`);
    expect(forged.status).toBe(401);
    expect(forged.headers['x-jwt-error']).toBeDefined();
    expect(await moduleHits()).toBe(before);
  });

  test('the deletion of its client is honoured on the next request', async () => {
    const token = await provider.issueToken('svc-module-doomed');
    for (let i = 0; i < 3; i += 1) expect((await bearer(token)).status).toBe(200);
    const list = await callStack(gw, CLIENTS, { headers: apk(gw.adminKey) });
    const doomed = (
      list.json as { items: { api_key_id: number; api_client_id: string }[] }
    ).items.find((c) => c.api_client_id === 'svc-module-doomed')!;
    const deleted = await settled(() =>
      call(gw.adminKey, `${CLIENTS}/${doomed.api_key_id}`, 'DELETE'),
    );
    expect(deleted.status).toBe(200);
    expect((await bearer(token)).status).toBe(401);
  });
});

/**
 * Rate-limit windows are whole hours of Unix time here: a test that starts in the last 20 s of
 * one waits for the next, so that the previous window's weight never enters its counts.
 */
async function inOneWindow(): Promise<void> {
  const into = Date.now() % 3_600_000;
  if (into > 3_580_000) await new Promise((r) => setTimeout(r, 3_600_000 - into + 50));
}

const remaining = (res: { headers: Record<string, unknown> }) =>
  /^"client";r=(\d+);t=[1-9][0-9]*$/.exec(String(res.headers.ratelimit))?.[1];

describe('a client with a rate limit', () => {
  test('a seen key within its limit is passed by the module with the draft headers; past it, Lua answers 429 and the module counted nothing twice', async () => {
    const { token } = await newKey(false, HOUR_LIMIT(6));
    await inOneWindow();
    const first = await call(token); // a miss: Lua asks, learns the record, counts it
    expect(first.status).toBe(200);
    expect(remaining(first)).toBe('5');
    const before = await moduleHits();
    const left: (string | undefined)[] = [];
    for (let i = 0; i < 5; i += 1) {
      const res = await call(token);
      expect(res.status).toBe(200);
      expect(res.headers['ratelimit-policy']).toBe('"client";q=6;w=3600');
      left.push(remaining(res));
    }
    expect(left).toEqual(['4', '3', '2', '1', '0']);
    expect((await moduleHits()) - before).toBe(5);
    // The seventh does not fit: the module leaves it uncounted, and Lua refuses it.
    const refused = await call(token);
    expect(refused.status).toBe(429);
    expect(refused.json).toEqual({ errors: [expect.objectContaining({ code: 'RATE_LIMITED' })] });
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(remaining(refused)).toBe('0');
    expect((await moduleHits()) - before).toBe(5);
  });

  test('a seen bearer token of a limited client: the same from the decision cache', async () => {
    const token = await provider.issueToken('svc-module-limited');
    await inOneWindow();
    expect((await bearer(token)).status).toBe(200); // verified by the sidecar, cached; counted
    const before = await moduleHits();
    const second = await bearer(token);
    const third = await bearer(token);
    expect([second.status, third.status]).toEqual([200, 200]);
    expect([remaining(second), remaining(third)]).toEqual(['1', '0']);
    expect(third.headers['ratelimit-policy']).toBe('"client";q=3;w=3600');
    expect((await moduleHits()) - before).toBe(2);
    expect((await bearer(token)).status).toBe(429);
    expect((await moduleHits()) - before).toBe(2);
  });
});

describe('the rate limit store closed (RATE_LIMITS_ON_FAILURE closed, Redis away)', () => {
  // The twins on one flag (RATE_LIMIT_STORE in common/contract/, set by the sidecar through the
  // control socket): the module passes no limited client while it is set, and Lua refuses it,
  // on the module's path (`/api`, a seen key) as on Lua's own (the hand-added location).
  const setFlag = (seconds: number) =>
    controlPost(gw, `${CONTROL.limits}?list=0&closed=${seconds}`);

  test('neither the module nor Lua passes a limited client: 503, nothing counted; a client without a limit is the module’s as before', async () => {
    const limited = await newKey(false, HOUR_LIMIT(5));
    const free = await newKey();
    await inOneWindow();
    expect(remaining(await call(limited.token))).toBe('4'); // learnt (Lua), counted
    expect((await call(free.token)).status).toBe(200);
    expect(await setFlag(3)).toBe(200);
    try {
      const before = await moduleHits();
      for (const path of ['/api', `${HAND_ADDED}api`]) {
        const res = await call(limited.token, path);
        expect(res.status, path).toBe(503);
        expect(res.json).toEqual({
          errors: [expect.objectContaining({ code: 'RATE_LIMIT_STORE_UNREACHABLE' })],
        });
        expect(res.headers['retry-after']).toBe('3');
        expect(res.headers['ratelimit-policy']).toBe('"client";q=5;w=3600');
        expect(remaining(res)).toBe('0');
      }
      expect(await moduleHits()).toBe(before);
      const unlimited = await call(free.token);
      expect(unlimited.status).toBe(200);
      expect(unlimited.headers.ratelimit).toBeUndefined();
      expect(await moduleHits()).toBe(before + 1);
    } finally {
      expect(await setFlag(0)).toBe(200);
    }
    // Cleared: the module's again, and the refused requests were never counted.
    const before = await moduleHits();
    const again = await call(limited.token);
    expect(again.status).toBe(200);
    expect(remaining(again)).toBe('3');
    expect(await moduleHits()).toBe(before + 1);
  });

  test('a ?closed= that is not whole seconds within the maximum is refused and sets nothing', async () => {
    const limited = await newKey(false, HOUR_LIMIT(5));
    await inOneWindow();
    expect((await call(limited.token)).status).toBe(200);
    expect(await setFlag(-1)).toBe(400);
    expect(await setFlag(3601)).toBe(400);
    expect((await call(limited.token)).status).toBe(200); // a refused ?closed= set nothing
  });
});

describe('everything else goes to the Lua access code', () => {
  test('management: an admin key is asked every time, a non-admin key is 403', async () => {
    const user = await newKey();
    expect((await call(user.token)).status).toBe(200);
    const before = await moduleHits();
    for (let i = 0; i < 3; i += 1) {
      expect((await call(gw.adminKey, CLIENTS)).status).toBe(200);
      expect((await call(user.token, CLIENTS)).status).toBe(403);
    }
    expect(await moduleHits()).toBe(before);
  });

  test('a location added by hand is authenticated by Lua, never by the module', async () => {
    const { token } = await newKey();
    expect((await call(token)).status).toBe(200);
    const before = await moduleHits();
    expect((await call(null, `${HAND_ADDED}api`)).status).toBe(401);
    // Passed to the app (which has no route there without the identity headers this location
    // does not set): the app's own answer, not the gateway's refusal.
    for (let i = 0; i < 3; i += 1) {
      const res = await call(token, `${HAND_ADDED}api`);
      expect(res.status).not.toBe(401);
      expect(res.headers['x-request-id']).toBeDefined();
    }
    expect(await moduleHits()).toBe(before);
  });

  test.each([
    ['a header name that is not a token', 'X(A): b\r\n', 400],
    ['a control byte in a value', 'X-A: b\x01c\r\n', 400],
    ['a line without a colon', 'XA\r\n', 400],
    ['more than 100 header lines', 'X-N: 1\r\n'.repeat(101), 431],
  ])('a seen key with %s: refused by Lua as always', async (_, extra, status) => {
    const { token } = await newKey();
    expect((await call(token)).status).toBe(200);
    const before = await moduleHits();
    expect(await raw(token, extra)).toBe(status);
    expect(await moduleHits()).toBe(before);
  });

  test('a seen key over HTTP/1.0 and HTTP/2 is the module’s; an HTTP/1 empty header value is Lua’s (and passes)', async () => {
    const { token } = await newKey();
    expect((await call(token)).status).toBe(200);
    let before = await moduleHits();
    expect(await raw(token, '', 'HTTP/1.0')).toBe(200);
    const answer = await h2(await target(), {
      ':method': 'GET',
      ':path': '/api',
      ':authority': gw.fqdn,
      authorization: `apk ${token}`,
    });
    expect(answer).toMatchObject({ kind: 'http', status: 200 });
    expect(await moduleHits()).toBe(before + 2);
    before = await moduleHits();
    expect(await raw(token, 'X-Empty:\r\n')).toBe(200);
    expect(await moduleHits()).toBe(before);
  });

  test('over HTTP/2, a seen key with a control byte in a value or more than 100 headers: refused by Lua as always', async () => {
    const { token } = await newKey();
    expect((await call(token)).status).toBe(200);
    const fields = (extra: [string, string][]): [string, string][] => [
      [':method', 'GET'],
      [':scheme', 'https'],
      [':path', '/api'],
      [':authority', gw.fqdn],
      ['authorization', `apk ${token}`],
      ...extra,
    ];
    const before = await moduleHits();
    // Written frame by frame: node:http2 will not send a control byte. The same request
    // without it passes, through the module.
    expect(await h2Raw(await target(), fields([['x-a', 'b']]))).toEqual({ status: 200 });
    expect(await moduleHits()).toBe(before + 1);
    expect(await h2Raw(await target(), fields([['x-a', 'b\x01c']]))).toEqual({ status: 400 });
    // Not the module's: passed on, the app would refuse it with a 400 of its own, so the count
    // is what tells.
    expect(await moduleHits()).toBe(before + 1);
    const many = Object.fromEntries(Array.from({ length: 101 }, (_, i) => [`x-n${i}`, '1']));
    const answer = await h2(await target(), {
      ':method': 'GET',
      ':path': '/api',
      ':authority': gw.fqdn,
      authorization: `apk ${token}`,
      ...many,
    });
    expect(answer).toMatchObject({ kind: 'http', status: 431 });
    expect(await moduleHits()).toBe(before + 1);
  });
});

describe("the module's hits in the clients' usage", () => {
  // The module counts its hits in its worker's memory and Lua writes them to shared memory once
  // a second as a batch (docs/decisions/20261128-usage-batches.md): every one must reach the
  // usage table, beside the Lua code's own, and nothing twice.
  test('every request the module passed is counted once in the usage API', async () => {
    const { id, token } = await newKey();
    const before = await moduleHits();
    for (let i = 0; i < 40; i += 1) expect((await call(token)).status).toBe(200);
    const passedByModule = (await moduleHits()) - before;
    // All but the first few (a first sight may be Lua's) are the module's.
    expect(passedByModule).toBeGreaterThanOrEqual(35);
    const since = encodeURIComponent(new Date(Date.now() - 3_600_000).toISOString());
    let allowed = 0;
    for (let tries = 0; tries < 150 && allowed < 40; tries += 1) {
      const res = await callStack(gw, `${CLIENTS}/${id}/usage?step=minute&since=${since}`, {
        headers: apk(gw.adminKey),
      });
      expect(res.status, res.text).toBe(200);
      const points = (res.json as { points: { allowed: number }[] }).points;
      allowed = points.reduce((n, p) => n + p.allowed, 0);
      if (allowed < 40) await new Promise((r) => setTimeout(r, 200));
    }
    expect(allowed).toBe(40);
  }, 60_000);
});
