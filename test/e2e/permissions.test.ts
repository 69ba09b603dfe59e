import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { freshDatabase } from '../support/database.js';
import { http } from '../support/http.js';
import { CLIENTS, uniqueName } from '../support/management.js';
import { sample } from '../support/metrics-text.js';
import type { NativeGatewayProcess } from '../support/native-gateway.js';
import { startNativeStack } from '../support/native-stack.js';
import { luaCounters as luaCountersIn } from '../support/nginx-control.js';
import { startProviderForGateway } from '../support/oidc-gateway-env.js';
import type { TestOidcProvider } from '../support/oidc-provider.js';
import {
  expectEngineSaw,
  expectH2Outcome,
  expectOutcome,
  expectPassed,
  H1_TRICKS,
  READ_SERVICE,
  rawRequest,
  reachedEngine as reachedEngineLog,
  TRICKS,
} from '../support/permission-tricks.js';
import type { RawTarget } from '../support/raw-tls.js';
import { apk } from '../support/sidecar.js';
import type { Stack } from '../support/stack.js';
import { callStack } from '../support/stack-http.js';

// Per-client permissions (docs/decisions/20261128-permissions.md) through a real native gateway:
// nginx, its module, the sidecar, PostgreSQL and the engine behind. What reached the engine is
// read from the engine's own request log (ENGINE_LOG_REQUESTS), by request id.

type NativeStack = Stack & { home: string; gateway: () => NativeGatewayProcess };
let gw: NativeStack;
/** A second pair on the same database: it hears of changes through PostgreSQL only. */
let other: NativeStack;
let provider: TestOidcProvider;
let scratch: string;
let target: RawTarget;

const BEARER = 'svc-restricted';
const ABOUT = '/resources/json/service/about';

beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'gw-e2e-perm-'));
  const started = await startProviderForGateway(scratch, [BEARER]);
  provider = started.provider;
  const databaseUrl = await freshDatabase();
  gw = await startNativeStack({
    env: { ...started.env, DATABASE_URL: databaseUrl, ENGINE_LOG_REQUESTS: 'true' },
  });
  other = await startNativeStack({ env: { DATABASE_URL: databaseUrl } });
  const tls = await gw.tls();
  target = { port: Number(new URL(gw.baseUrl).port), ca: tls.ca, servername: tls.servername };
}, 240_000);
afterAll(async () => {
  await Promise.all([gw?.close(), other?.close()]);
  await provider?.stop();
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

const manage = (method: string, path: string, json?: unknown) =>
  callStack(gw, path, {
    method,
    headers: apk(gw.adminKey),
    ...(json === undefined ? {} : { json }),
  });

async function newClient(
  permissions: unknown,
  extra: Record<string, unknown> = { generate_api_key: true },
): Promise<{ id: number; token: string }> {
  const res = await manage('POST', CLIENTS, {
    name: uniqueName('perm'),
    is_admin: false,
    ...extra,
    ...(permissions === undefined ? {} : { permissions }),
  });
  expect(res.status, res.text).toBe(201);
  const body = res.json as { api_key_id: number; token?: string };
  return { id: body.api_key_id, token: body.token ?? '' };
}

const call = (token: string, path: string, method = 'GET') =>
  callStack(gw, path, { method, headers: apk(token) });

/** What the engine saw of `ids`, once it has logged an allowed request sent after them. */
const reachedEngine = (ids: string[], token: string, allowed: string) =>
  reachedEngineLog(
    ids,
    async () => {
      const marker = await call(token, allowed);
      expectPassed(marker);
      return String(marker.headers['x-request-id']);
    },
    () => gw.logs('app'),
  );

function expectRefusal(
  res: { status: number; json?: unknown; text: string },
  status: number,
  code: string,
): void {
  expect(res.status, res.text).toBe(status);
  const body = res.json as { errors: { code: string; message: string }[] };
  expect(Object.keys(body)).toEqual(['errors']);
  expect(body.errors[0]?.code).toBe(code);
}

/** nginx's Lua counters, from its control socket. */
const luaCounters = () => luaCountersIn(gw);

/** Counters are flushed from each worker about once a second: waits for `key` to reach `n`. */
async function counterReaches(key: string, n: number): Promise<number> {
  const deadline = Date.now() + 5_000;
  let value = (await luaCounters())[key] ?? 0;
  while (value < n && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 100));
    value = (await luaCounters())[key] ?? 0;
  }
  return value;
}

describe('a read-only key for one subtree', () => {
  test('GET and HEAD below it reach the engine; other methods and paths are 403 PERMISSION_DENIED and reach nothing', async () => {
    const { id, token } = await newClient(READ_SERVICE);
    const allowed = await call(token, ABOUT);
    expectPassed(allowed);
    expect(
      (await reachedEngine([String(allowed.headers['x-request-id'])], token, ABOUT)).length,
    ).toBe(1);
    const head = await call(token, ABOUT, 'HEAD');
    expect(head.status).not.toBe(403);
    const refused = [
      await call(token, ABOUT, 'POST'),
      await call(token, ABOUT, 'DELETE'),
      await call(token, '/api'),
      await call(token, '/resources/json/delphix/about'),
      await call(token, '/resources/json/service'.toUpperCase()),
    ];
    for (const res of refused) {
      expectRefusal(res, 403, 'PERMISSION_DENIED');
      const message = (res.json as { errors: { message: string }[] }).errors[0]!.message;
      // Which rule set refused (the client's), never the path the caller sent.
      expect(message).toBe(
        `API client ${id}: The API client's permissions do not allow this method on this path.`,
      );
      expect(res.text).not.toContain('resources');
      expect(res.text).not.toContain('/api');
      expect(res.headers['x-request-id']).toMatch(/^[0-9a-f]{32}$/);
    }
    const ids = refused.map((r) => String(r.headers['x-request-id']));
    expect(await reachedEngine(ids, token, ABOUT)).toEqual([]);
    // The subtree itself (zero segments below) is allowed: the engine answers it (404).
    expect((await call(token, '/resources/json/service')).status).not.toBe(403);
  });

  test('refusals are counted in the metrics and as failed authentications of the client', async () => {
    const { id, token } = await newClient(READ_SERVICE);
    // The refusals of earlier tests are flushed within a second: counted from after them.
    await new Promise((r) => setTimeout(r, 1_200));
    const before = (await luaCounters()).permission_refused ?? 0;
    for (let i = 0; i < 3; i += 1) expect((await call(token, '/api')).status).toBe(403);
    expect(await counterReaches('permission_refused', before + 3)).toBe(before + 3);
    const metrics = await http(`${gw.gateway().metricsUrl}/metrics`);
    expect(sample(metrics.text, 'gateway_nginx_permission_refused_total')).toBeGreaterThanOrEqual(
      before + 3,
    );
    // The sidecar collects nginx's refusals every few seconds into auth_failures.
    const deadline = Date.now() + 30_000;
    let failed = 0;
    while (failed < 3 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 500));
      const usage = await manage('GET', `${CLIENTS}/${id}/usage?step=minute`);
      failed = (usage.json as { points: { failed: number }[] }).points.reduce(
        (n, p) => n + p.failed,
        0,
      );
    }
    expect(failed).toBe(3);
  }, 60_000);
});

describe('a change of the rules', () => {
  test('a PUT adding or removing a rule applies on the next request; null restores everything; [] allows nothing', async () => {
    const { id, token } = await newClient([{ methods: ['GET'], path: '/api' }]);
    expect((await call(token, '/api')).status).toBe(200);
    expectRefusal(await call(token, ABOUT), 403, 'PERMISSION_DENIED');

    let put = await manage('PUT', `${CLIENTS}/${id}`, {
      permissions: [
        { methods: ['GET'], path: '/api' },
        { methods: ['GET'], path: '/resources/json/service/*' },
      ],
    });
    expect(put.status).toBe(200);
    expectPassed(await call(token, ABOUT));

    put = await manage('PUT', `${CLIENTS}/${id}`, {
      permissions: [{ methods: ['GET'], path: '/resources/json/service/*' }],
    });
    expect(put.status).toBe(200);
    expectRefusal(await call(token, '/api'), 403, 'PERMISSION_DENIED');
    expectPassed(await call(token, ABOUT));

    put = await manage('PUT', `${CLIENTS}/${id}`, { permissions: [] });
    expectRefusal(await call(token, ABOUT), 403, 'PERMISSION_DENIED');

    put = await manage('PUT', `${CLIENTS}/${id}`, { permissions: null });
    expect((await call(token, '/api')).status).toBe(200);
    expect((await call(token, ABOUT, 'POST')).status).not.toBe(403);
  });

  test('bad rules are a 400 naming the rule, through the gateway, and change nothing', async () => {
    const { id, token } = await newClient(READ_SERVICE);
    const res = await manage('PUT', `${CLIENTS}/${id}`, {
      permissions: [
        { methods: ['GET'], path: '/ok/**' },
        { methods: ['GET'], path: '/a/../b' },
      ],
    });
    expectRefusal(res, 400, 'INVALID_FIELD');
    expect((res.json as { errors: { field: string }[] }).errors[0]?.field).toBe(
      'permissions[1].path',
    );
    expectPassed(await call(token, ABOUT));
    expectRefusal(await call(token, '/api'), 403, 'PERMISSION_DENIED');
  });

  test('an admin key with rules manages only if a rule allows the management path', async () => {
    const { id, token } = await newClient([{ methods: ['GET'], path: '/api' }], {
      generate_api_key: true,
      is_admin: true,
    });
    expectRefusal(await call(token, CLIENTS), 403, 'PERMISSION_DENIED');
    await manage('PUT', `${CLIENTS}/${id}`, {
      permissions: [{ methods: ['GET'], path: '/v1/management/**' }],
    });
    expect((await call(token, CLIENTS)).status).toBe(200);
    expectRefusal(await call(token, CLIENTS, 'POST'), 403, 'PERMISSION_DENIED');
  });
});

describe('two pairs on one database', () => {
  /** Retries `call` until `ok` says yes, for at most 3 s (a push takes milliseconds). */
  async function soon(call: () => Promise<{ status: number }>, ok: (s: number) => boolean) {
    const deadline = Date.now() + 3_000;
    let status = (await call()).status;
    while (!ok(status) && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
      status = (await call()).status;
    }
    return status;
  }

  test('a PUT through one pair applies on the next request there and within the push on the other', async () => {
    const { id, token } = await newClient([{ methods: ['GET'], path: '/api' }]);
    const onOther = (path: string) => callStack(other, path, { headers: apk(token) });
    expect(
      await soon(
        () => onOther('/api'),
        (s) => s === 200,
      ),
    ).toBe(200);
    expectRefusal(await onOther(ABOUT), 403, 'PERMISSION_DENIED');

    // Adding a rule: the serving pair at once, the other once PostgreSQL's notice arrives.
    await manage('PUT', `${CLIENTS}/${id}`, {
      permissions: [
        { methods: ['GET'], path: '/api' },
        { methods: ['GET'], path: '/resources/json/service/**' },
      ],
    });
    expectPassed(await call(token, ABOUT));
    expect(
      await soon(
        () => onOther(ABOUT),
        (s) => s !== 403,
      ),
    ).not.toBe(403);
    // Removing one.
    await manage('PUT', `${CLIENTS}/${id}`, {
      permissions: [{ methods: ['GET'], path: '/resources/json/service/**' }],
    });
    expectRefusal(await call(token, '/api'), 403, 'PERMISSION_DENIED');
    expect(
      await soon(
        () => onOther('/api'),
        (s) => s === 403,
      ),
    ).toBe(403);
    // null: everything again, on both.
    await manage('PUT', `${CLIENTS}/${id}`, { permissions: null });
    expect((await call(token, '/api')).status).toBe(200);
    expect(
      await soon(
        () => onOther('/api'),
        (s) => s === 200,
      ),
    ).toBe(200);
  });
});

describe('a bearer-token client', () => {
  test('is bound by its rules, from the sidecar and from the decision cache alike', async () => {
    const { id } = await newClient(READ_SERVICE, {
      generate_api_key: false,
      api_client_id: BEARER,
    });
    const token = await provider.issueToken(BEARER);
    const bearer = (path: string, method = 'GET') =>
      callStack(gw, path, { method, headers: { Authorization: `Bearer ${token}` } });
    // The first request asks the sidecar, the ones after are cached decisions.
    for (let i = 0; i < 3; i += 1) {
      expectPassed(await bearer(ABOUT));
      expectRefusal(await bearer('/api'), 403, 'PERMISSION_DENIED');
      expectRefusal(await bearer(ABOUT, 'PUT'), 403, 'PERMISSION_DENIED');
    }
    await manage('PUT', `${CLIENTS}/${id}`, { permissions: null });
    expect((await bearer('/api')).status).toBe(200);
  });
});

describe('the nginx module and Lua decide a restricted client alike', () => {
  // One rule of each shape, a path it allows and one it does not. The module passes a seen key
  // without Lua only when its rules allow the request (ngx_http_gateway_hit_permits); every
  // other request is Lua's, which refuses it. Which path decided is read from module_hit.
  const SHAPES: [string, string, string][] = [
    ['/', '/', '/api'],
    ['/**', '/api', '/api'],
    ['/*', '/api', '/resources/json'],
    ['/api', '/api', '/api/'],
    ['/resources/json/service/*', ABOUT, '/resources/json/service/about/x'],
    ['/resources/*/service/about', ABOUT, '/resources/json/delphix/x'],
    ['/resources/json/**', ABOUT, '/resources/other'],
    ['/resources/*/**', ABOUT, '/resources'],
  ];

  test.each(SHAPES)(
    '%s: allowed requests are module hits, refused ones Lua’s 403',
    async (pattern, yes, no) => {
      const { token } = await newClient([{ methods: ['GET', 'POST'], path: pattern }]);
      // The key table already holds the record (created through this pair).
      await new Promise((r) => setTimeout(r, 1_200));
      const hitsBefore = (await luaCounters()).module_hit ?? 0;
      const refusedBefore = (await luaCounters()).permission_refused ?? 0;
      const bothAllowed = pattern === '/**';
      for (let i = 0; i < 3; i += 1) {
        expectPassed(await call(token, yes));
        const other = await call(token, no);
        if (bothAllowed) expectPassed(other);
        else expectRefusal(other, 403, 'PERMISSION_DENIED');
        expectRefusal(await call(token, yes, 'DELETE'), 403, 'PERMISSION_DENIED');
        // An ambiguous spelling of the allowed path: never the module's, Lua's 400.
        const tricky = await rawRequest(target, gw.fqdn, token, `${yes === '/' ? '' : yes}/./`);
        expect(tricky.status).toBe(400);
      }
      const passed = bothAllowed ? 6 : 3;
      expect(await counterReaches('module_hit', hitsBefore + passed)).toBe(hitsBefore + passed);
      const refused = bothAllowed ? 3 : 6;
      expect(await counterReaches('permission_refused', refusedBefore + refused)).toBe(
        refusedBefore + refused,
      );
    },
    30_000,
  );
});

describe('tricks against a restricted client (raw, over TLS)', () => {
  let token: string;
  beforeAll(async () => {
    ({ token } = await newClient(READ_SERVICE));
  });

  test.each([...TRICKS, ...H1_TRICKS])('HTTP/1.1: %s → %s', async (_, requestTarget, outcome) => {
    const res = await rawRequest(target, gw.fqdn, token, requestTarget);
    expectOutcome(outcome, res.status, res.body);
    expectEngineSaw(await reachedEngine([res.id], token, ABOUT), outcome);
  });

  test.each(TRICKS)('HTTP/2: %s → %s', async (_, path, outcome) => {
    await expectH2Outcome(target, gw.fqdn, token, path, outcome);
  });
});
