import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, test } from 'vitest';
import { freshDatabase } from '../../support/database.js';
import { type HttpOptions, http } from '../../support/http.js';
import { CLIENTS, createClient, uniqueName } from '../../support/management.js';
import { committedDocument, DocumentedResponses } from '../../support/openapi-check.js';
import { apk, startTestSidecar, type TestSidecar } from '../../support/sidecar.js';

// Real answers of a running sidecar on real PostgreSQL, checked against docs/openapi.json: each
// status must be documented for its operation and each body must match its schema. The last
// test asks that every documented (operation, status) was shown here at least once.

const ONE = `${CLIENTS}/{id}`;
const SETTINGS = '/v1/management/settings';
const OPENAPI = '/v1/management/openapi.json';
const ROTATE = `${ONE}/rotate`;
const USAGE = `${ONE}/usage`;
const EVENTS = '/v1/management/audit-events';
const FAILURES = '/v1/management/auth-failures';

let sidecar: TestSidecar;
let databaseUrl: string;
let userKey: string;
let spareId: number;
let doomedId: number;
let rotatingId: number;
const docs = new DocumentedResponses(committedDocument());

beforeAll(async () => {
  databaseUrl = await freshDatabase();
  sidecar = await startTestSidecar(databaseUrl);
  userKey = (
    await createClient(sidecar.url, sidecar.adminKey, {
      name: 'documented user',
      is_admin: false,
      generate_api_key: true,
      api_client_id: 'documented-subject',
    })
  ).token;
  spareId = (
    await createClient(sidecar.url, sidecar.adminKey, {
      name: uniqueName(),
      is_admin: false,
      generate_api_key: false,
      api_client_id: uniqueName('sub'),
    })
  ).id;
  doomedId = (
    await createClient(sidecar.url, sidecar.adminKey, {
      name: uniqueName(),
      is_admin: false,
      generate_api_key: true,
    })
  ).id;
  rotatingId = (
    await createClient(sidecar.url, sidecar.adminKey, {
      name: uniqueName('rotating'),
      is_admin: false,
      generate_api_key: true,
    })
  ).id;
});
afterAll(() => sidecar?.close());

type Who = 'admin' | 'user' | 'nobody';

interface Case {
  what: string;
  method: string;
  /** The path template, as the document names it. */
  path: string;
  /** The real path, when it differs from the template. */
  url?: () => string;
  who?: Who;
  request?: Omit<HttpOptions, 'method' | 'headers'>;
  headers?: Record<string, string>;
  status: number;
}

async function call(c: Case) {
  const who = c.who ?? 'admin';
  const key = who === 'admin' ? sidecar.adminKey : who === 'user' ? userKey : null;
  const res = await http(`${sidecar.url}${c.url ? c.url() : c.path}`, {
    method: c.method,
    headers: { ...(key ? apk(key) : {}), ...(c.headers ?? {}) },
    ...(c.request ?? {}),
  });
  expect(res.status, res.text).toBe(c.status);
  docs.check(c.method, c.path, res);
  // Every management answer, whatever its status: a record or a list is as private as a key.
  expect(res.headers['cache-control'], `${c.method} ${c.path}: ${c.what}`).toBe('no-store');
  return res;
}

const big = { json: { name: 'x'.repeat(70 * 1024) } };
const textBody = { body: '{}', headers: { 'Content-Type': 'text/plain' } };

/** 401 and 403 for a route (the admin check runs before everything). */
const refusals = (method: string, path: string, url?: () => string): Case[] => [
  { what: 'no credential', method, path, who: 'nobody', status: 401, ...(url ? { url } : {}) },
  { what: 'a non-admin key', method, path, who: 'user', status: 403, ...(url ? { url } : {}) },
];

const one = (id: () => number | string) => () => `${CLIENTS}/${id()}`;

const cases: Case[] = [
  {
    what: 'created with a key',
    method: 'POST',
    path: CLIENTS,
    request: { json: { name: uniqueName(), is_admin: false, generate_api_key: true } },
    status: 201,
  },
  {
    what: 'created without a key',
    method: 'POST',
    path: CLIENTS,
    request: {
      json: { name: uniqueName(), is_admin: true, generate_api_key: false, api_client_id: 's1' },
    },
    status: 201,
  },
  { what: 'an empty object', method: 'POST', path: CLIENTS, request: { json: {} }, status: 400 },
  {
    what: 'a taken name',
    method: 'POST',
    path: CLIENTS,
    request: { json: { name: 'documented user', is_admin: false, generate_api_key: true } },
    status: 409,
  },
  { what: 'a body over 64 KiB', method: 'POST', path: CLIENTS, request: big, status: 413 },
  { what: 'a text body', method: 'POST', path: CLIENTS, ...withText(), status: 415 },
  ...refusals('POST', CLIENTS),

  { what: 'a page', method: 'GET', path: CLIENTS, url: () => `${CLIENTS}?limit=2`, status: 200 },
  { what: 'everything (streamed)', method: 'GET', path: CLIENTS, status: 200 },
  {
    what: 'a page in -name order',
    method: 'GET',
    path: CLIENTS,
    url: () => `${CLIENTS}?limit=1&sort=-name`,
    status: 200,
  },
  { what: 'limit=0', method: 'GET', path: CLIENTS, url: () => `${CLIENTS}?limit=0`, status: 400 },
  ...refusals('GET', CLIENTS),
  {
    what: 'headers of a page',
    method: 'HEAD',
    path: CLIENTS,
    url: () => `${CLIENTS}?limit=1`,
    status: 200,
  },
  { what: 'headers of all', method: 'HEAD', path: CLIENTS, status: 200 },
  {
    what: 'a bad query, headers only',
    method: 'HEAD',
    path: CLIENTS,
    url: () => `${CLIENTS}?x=1`,
    status: 400,
  },
  ...refusals('HEAD', CLIENTS),

  { what: 'a client', method: 'GET', path: ONE, url: one(() => spareId), status: 200 },
  { what: 'a bad id', method: 'GET', path: ONE, url: one(() => '01'), status: 400 },
  { what: 'an unknown id', method: 'GET', path: ONE, url: one(() => 999_999), status: 404 },
  ...refusals(
    'GET',
    ONE,
    one(() => spareId),
  ),
  {
    what: 'a client, headers only',
    method: 'HEAD',
    path: ONE,
    url: one(() => spareId),
    status: 200,
  },
  { what: 'a bad id, headers only', method: 'HEAD', path: ONE, url: one(() => 'x'), status: 400 },
  {
    what: 'unknown, headers only',
    method: 'HEAD',
    path: ONE,
    url: one(() => 999_999),
    status: 404,
  },
  ...refusals(
    'HEAD',
    ONE,
    one(() => spareId),
  ),

  {
    what: 'a change',
    method: 'PUT',
    path: ONE,
    url: one(() => spareId),
    request: { json: { name: uniqueName('renamed') } },
    status: 200,
  },
  {
    what: 'an empty change',
    method: 'PUT',
    path: ONE,
    url: one(() => spareId),
    request: { json: {} },
    status: 400,
  },
  {
    what: 'an unknown id',
    method: 'PUT',
    path: ONE,
    url: one(() => 999_999),
    request: { json: { is_admin: false } },
    status: 404,
  },
  {
    what: 'a taken name',
    method: 'PUT',
    path: ONE,
    url: one(() => spareId),
    request: { json: { name: 'documented user' } },
    status: 409,
  },
  {
    what: 'a body over 64 KiB',
    method: 'PUT',
    path: ONE,
    url: one(() => spareId),
    request: big,
    status: 413,
  },
  {
    what: 'a text body',
    method: 'PUT',
    path: ONE,
    url: one(() => spareId),
    ...withText(),
    status: 415,
  },
  ...refusals(
    'PUT',
    ONE,
    one(() => spareId),
  ),

  { what: 'a bad id', method: 'DELETE', path: ONE, url: one(() => '0'), status: 400 },
  { what: 'an unknown id', method: 'DELETE', path: ONE, url: one(() => 999_999), status: 404 },
  ...refusals(
    'DELETE',
    ONE,
    one(() => doomedId),
  ),
  { what: 'a client', method: 'DELETE', path: ONE, url: one(() => doomedId), status: 200 },

  ...rotateCases(),
  ...usageCases(),
  ...listingCases(EVENTS, `${EVENTS}?limit=2&action=api_client.create`),
  ...listingCases(FAILURES, `${FAILURES}?limit=2`),

  { what: 'the settings', method: 'GET', path: SETTINGS, status: 200 },
  ...refusals('GET', SETTINGS),
  { what: 'the settings, headers only', method: 'HEAD', path: SETTINGS, status: 200 },
  ...refusals('HEAD', SETTINGS),
  {
    what: 'a change',
    method: 'PUT',
    path: SETTINGS,
    request: { json: { bootstrap_locked: false } },
    status: 200,
  },
  { what: 'an empty object', method: 'PUT', path: SETTINGS, request: { json: {} }, status: 400 },
  { what: 'a body over 64 KiB', method: 'PUT', path: SETTINGS, request: big, status: 413 },
  { what: 'a text body', method: 'PUT', path: SETTINGS, ...withText(), status: 415 },
  ...refusals('PUT', SETTINGS),

  { what: 'the document', method: 'GET', path: OPENAPI, status: 200 },
  ...refusals('GET', OPENAPI),
  { what: 'the document, headers only', method: 'HEAD', path: OPENAPI, status: 200 },
  ...refusals('HEAD', OPENAPI),
];

/** The key rotation: a new key, each refusal, the shared body answers. */
function rotateCases(): Case[] {
  const rotate = (id: () => number | string) => () => `${CLIENTS}/${id()}/rotate`;
  const grace = { json: { grace_period_seconds: 60 } };
  return [
    {
      what: 'a new key, the old one kept a minute',
      method: 'POST',
      path: ROTATE,
      url: rotate(() => rotatingId),
      request: grace,
      status: 200,
    },
    {
      what: 'a new key, the old one refused at once',
      method: 'POST',
      path: ROTATE,
      url: rotate(() => rotatingId),
      request: { json: { grace_period_seconds: 0 } },
      status: 200,
    },
    {
      what: 'a grace period over 7 days',
      method: 'POST',
      path: ROTATE,
      url: rotate(() => rotatingId),
      request: { json: { grace_period_seconds: 604_801 } },
      status: 400,
    },
    {
      what: 'an unknown id',
      method: 'POST',
      path: ROTATE,
      url: rotate(() => 999_999),
      request: grace,
      status: 404,
    },
    {
      what: 'a client without a key',
      method: 'POST',
      path: ROTATE,
      url: rotate(() => spareId),
      request: grace,
      status: 409,
    },
    {
      what: 'a body over 64 KiB',
      method: 'POST',
      path: ROTATE,
      url: rotate(() => rotatingId),
      request: big,
      status: 413,
    },
    {
      what: 'a text body',
      method: 'POST',
      path: ROTATE,
      url: rotate(() => rotatingId),
      ...withText(),
      status: 415,
    },
    ...refusals(
      'POST',
      ROTATE,
      rotate(() => rotatingId),
    ),
  ];
}

/** A client's usage series: GET and HEAD, good and bad queries, unknown clients. */
function usageCases(): Case[] {
  const usage =
    (id: () => number | string, query = '') =>
    () =>
      `${CLIENTS}/${id()}/usage${query}`;
  return ['GET', 'HEAD'].flatMap((method): Case[] => [
    { what: 'a series', method, path: USAGE, url: usage(() => spareId), status: 200 },
    {
      what: 'a bad step',
      method,
      path: USAGE,
      url: usage(() => spareId, '?step=week'),
      status: 400,
    },
    { what: 'an unknown id', method, path: USAGE, url: usage(() => 999_999), status: 404 },
    ...refusals(
      method,
      USAGE,
      usage(() => spareId),
    ),
  ]);
}

/** A read-only listing (audit events, failure counts): GET and HEAD, good and bad queries. */
function listingCases(path: string, filtered: string): Case[] {
  return ['GET', 'HEAD'].flatMap((method): Case[] => [
    { what: 'the newest', method, path, status: 200 },
    { what: 'a filtered page', method, path, url: () => filtered, status: 200 },
    { what: 'limit=0', method, path, url: () => `${path}?limit=0`, status: 400 },
    { what: 'a foreign cursor', method, path, url: () => `${path}?cursor=zz`, status: 400 },
    ...refusals(method, path),
  ]);
}

function withText(): Pick<Case, 'request' | 'headers'> {
  return { request: { body: textBody.body }, headers: textBody.headers };
}

describe('real answers match the document', () => {
  test.each(cases)('$method $path: $what → $status', async (c) => {
    await call(c);
  });

  test('a listing walked through its cursors matches at every step', async () => {
    let url = `${CLIENTS}?limit=1`;
    for (let step = 0; step < 3; step += 1) {
      const res = await call({
        what: 'walk',
        method: 'GET',
        path: CLIENTS,
        url: () => url,
        status: 200,
      });
      const next = (res.json as { response_metadata: { next_cursor: string | null } })
        .response_metadata.next_cursor;
      expect(next).not.toBeNull();
      url = `${CLIENTS}?limit=1&cursor=${encodeURIComponent(next!)}`;
    }
  });
});

test('answers outside the document carry no-store too: unknown paths, methods, bodies, escapes', async () => {
  const ask = (path: string, options: HttpOptions = {}) =>
    http(`${sidecar.url}${path}`, {
      ...options,
      headers: { ...apk(sidecar.adminKey), ...(options.headers as Record<string, string>) },
    });
  const answers = {
    'an unknown path': await ask('/v1/management/nothing-here'),
    'the bare prefix': await ask('/v1/management'),
    'a method the path does not serve': await ask(CLIENTS, { method: 'PATCH', json: {} }),
    'a body that is not JSON': await ask(CLIENTS, {
      method: 'POST',
      body: '{',
      headers: { 'Content-Type': 'application/json' },
    }),
    'a bad percent-escape': await ask(`${CLIENTS}/%zz`),
    'HEAD of a list': await ask(CLIENTS, { method: 'HEAD' }),
  };
  for (const [what, res] of Object.entries(answers)) {
    expect(res.status, what).not.toBe(500);
    expect(res.headers['cache-control'], what).toBe('no-store');
  }
});

describe('with the database unreachable', () => {
  test('every operation answers 503 as documented', async () => {
    // No new connection is allowed, and the open ones are ended: the next lookup fails.
    const name = new URL(databaseUrl).pathname.slice(1);
    const admin = new pg.Client({ connectionString: inject('postgresAdminUrl') });
    await admin.connect();
    await admin.query(`ALTER DATABASE ${name} WITH ALLOW_CONNECTIONS false`);
    await admin.query(
      'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()',
      [name],
    );
    await admin.end().catch(() => undefined);
    // A key never seen before: its client must be read from the database.
    const unknown = `424242.${'B'.repeat(43)}`;
    for (const path of Object.keys((committedDocument() as { paths: object }).paths)) {
      const doc = committedDocument() as { paths: Record<string, Record<string, unknown>> };
      for (const method of Object.keys(doc.paths[path]!)) {
        const url = `${sidecar.url}${path.replace('{id}', String(spareId))}`;
        const res = await http(url, {
          method: method.toUpperCase(),
          headers: apk(unknown),
          ...(method === 'put' || method === 'post' ? { json: {} } : {}),
        });
        expect(res.status, `${method} ${path}: ${res.text}`).toBe(503);
        docs.check(method, path, res);
        expect(res.headers['cache-control'], `${method} ${path}`).toBe('no-store');
      }
    }
  });
});

test('every documented (operation, status) was shown by a real answer above', () => {
  const unseen = docs.documented().filter((pair) => !docs.seen.has(pair));
  expect(unseen).toEqual([]);
});
