import { gzipSync } from 'node:zlib';
import { beforeAll, describe, expect, test } from 'vitest';
import { type RunningEngine, startEngine } from '../../../engine/index.js';
import { ADMIN_PASSWORD, apiSession } from './support/engine.js';
import { type RawRequest, raw, rawSocket, sessionSet } from './support/raw-http.js';

// A call that refuses a dead session with its own status (GET session is a probe: HTTP 200).
const CURRENT_USER = '/resources/json/service/user/current';

// One engine for the whole table: a bad input must not disturb the calls that follow it.
let e: RunningEngine;
let unauthenticated: string;
let admin: string;
let adminV1: string;
const logged: string[] = [];

beforeAll(async () => {
  e = await startEngine({ adminPassword: ADMIN_PASSWORD, log: (line) => logged.push(line) });
  const open = async (major: number, minor: number) =>
    sessionSet(
      await raw(e.url, 'POST', SESSION, { json: apiSession({ major, minor, micro: 0 }) }),
    )!;
  const logIn = async (session: string) =>
    sessionSet(
      await raw(e.url, 'POST', LOGIN, {
        session,
        json: { type: 'LoginRequest', username: 'admin', password: ADMIN_PASSWORD },
      }),
    )!;
  unauthenticated = await open(2, 1);
  admin = await logIn(await open(2, 1));
  adminV1 = await logIn(await open(1, 0));
  return () => e.close();
});

const SESSION = '/resources/json/service/session';
const LOGIN = '/resources/json/service/login';
const USERS = '/resources/json/service/user';
const JSON_TYPE = { 'Content-Type': 'application/json' };

const goodVersion = { type: 'APIVersion', major: 2, minor: 1, micro: 0 };
const withVersion = (version: unknown) => ({ type: 'APISession', version });
const versionWith = (changes: Record<string, unknown>) =>
  withVersion({ ...goodVersion, ...changes });
const versionWithout = (field: string) => {
  const { [field]: _, ...rest } = goodVersion as Record<string, unknown>;
  return withVersion(rest);
};
const loginWith = (changes: Record<string, unknown>) => ({
  type: 'LoginRequest',
  username: 'admin',
  password: 'x',
  ...changes,
});
const user = (changes: Record<string, unknown>) => ({
  type: 'User',
  name: 'valid',
  password: 'password-1',
  ...changes,
});

type Who = 'none' | 'unauthenticated' | 'admin' | 'adminV1';
interface BadInput {
  name: string;
  who: Who;
  method: string;
  path: string;
  request: RawRequest;
  status: number;
  id: string;
}

const INVALID = 'exception.webservices.request.invalid';
const MALFORMED = 'exception.webservices.request.malformed';
const MEDIA = 'exception.webservices.request.unsupported.media.type';

const bad = (
  name: string,
  who: Who,
  method: string,
  path: string,
  request: RawRequest,
  status = 400,
  id = INVALID,
): BadInput => ({
  name,
  who,
  method,
  path,
  request,
  status,
  id,
});
const session = (name: string, body: unknown) => bad(name, 'none', 'POST', SESSION, { json: body });
const sessionText = (name: string, text: string, id = MALFORMED) =>
  bad(name, 'none', 'POST', SESSION, { body: text, headers: JSON_TYPE }, 400, id);
const loginBad = (name: string, body: unknown) =>
  bad(name, 'unauthenticated', 'POST', LOGIN, { json: body });
const create = (name: string, body: unknown, who: Who = 'admin') =>
  bad(name, who, 'POST', USERS, { json: body });
const query = (name: string, q: string) => bad(name, 'admin', 'GET', `${USERS}?${q}`, {});

const BAD_INPUTS: BadInput[] = [
  // Malformed JSON and wrong top-level values.
  sessionText('truncated JSON', '{"type":"APISession","version":'),
  sessionText('JSON followed by garbage', '{"type":"APISession"} trailing'),
  sessionText('single-quoted JSON', "{'type':'APISession'}"),
  sessionText('a bare string at the top level', '"APISession"'),
  sessionText('null at the top level', 'null'),
  sessionText('an array at the top level', '[]', INVALID),
  sessionText('an empty body', '', INVALID),
  sessionText('an array nested 5000 deep', `${'['.repeat(5000)}${']'.repeat(5000)}`, INVALID),
  // Wrong or missing type.
  session('missing type', { version: goodVersion }),
  session('type of another record', { type: 'LoginRequest', version: goodVersion }),
  session('type in lower case', { type: 'apisession', version: goodVersion }),
  session('type as a number', { type: 1, version: goodVersion }),
  session('version record without its type', withVersion({ major: 2, minor: 1, micro: 0 })),
  session('version record with another type', versionWith({ type: 'Version' })),
  // Missing or non-integer version fields.
  session('missing version', { type: 'APISession' }),
  session('version as a string', withVersion('2.1.0')),
  session('version as an array', withVersion([2, 1, 0])),
  session('missing major', versionWithout('major')),
  session('missing minor', versionWithout('minor')),
  session('missing micro', versionWithout('micro')),
  session('major as a string', versionWith({ major: '2' })),
  session('minor as a fraction', versionWith({ minor: 1.5 })),
  session('negative micro', versionWith({ micro: -1 })),
  session('major as a huge number', versionWith({ major: 1e300 })),
  session('major as null', versionWith({ major: null })),
  session('major as a boolean', versionWith({ major: true })),
  // Unknown fields and wrong field types.
  session('unknown field in APISession', { ...withVersion(goodVersion), expires: 3600 }),
  session('unknown field in APIVersion', versionWith({ patch: 0 })),
  session(
    '__proto__ as a field',
    JSON.parse(
      '{"type":"APISession","version":{"type":"APIVersion","major":2,"minor":1,"micro":0},"__proto__":{"admin":true}}',
    ),
  ),
  session('malformed locale', { ...withVersion(goodVersion), locale: 'english' }),
  // Unknown target and other login mistakes.
  loginBad('unknown login target', loginWith({ target: 'LDAP' })),
  loginBad('login target in lower case', loginWith({ target: 'domain' })),
  loginBad('login target as null', loginWith({ target: null })),
  loginBad('login without password', { type: 'LoginRequest', username: 'admin' }),
  loginBad('login with a numeric user name', loginWith({ username: 42 })),
  loginBad('login with an empty password', loginWith({ password: '' })),
  loginBad('login with an unknown field', loginWith({ otp: '123456' })),
  loginBad('login with the APISession type', { ...loginWith({}), type: 'APISession' }),
  // Object inputs.
  create('user name with a space', user({ name: 'has space' })),
  create('user name of 65 characters', user({ name: 'a'.repeat(65) })),
  create('password shorter than 8', user({ password: 'short' })),
  create('unknown role', user({ role: 'ROOT' })),
  create('enabled as a string', user({ enabled: 'yes' })),
  create('read-only lastLogin sent', user({ lastLogin: '2026-01-01T00:00:00Z' })),
  create('admin in a major-2 session', user({ admin: true })),
  create('email in a 1.0 session', user({ email: 'a@b' }), 'adminV1'),
  create('admin as a string in a 1.0 session', user({ admin: 'true' }), 'adminV1'),
  create('user without a name', { type: 'User', password: 'password-1' }),
  bad('rename through update', 'admin', 'POST', `${USERS}/admin`, {
    json: { type: 'User', name: 'other' },
  }),
  // Query parameters: simple values only.
  query('limit that is not a number', 'limit=ten'),
  query('limit of zero', 'limit=0'),
  query('limit above the maximum', 'limit=501'),
  query('negative offset', 'offset=-1'),
  query('repeated parameter', 'limit=1&limit=2'),
  query('bracketed parameter', 'target[]=DOMAIN'),
  query('unknown parameter', 'sort=name'),
  query('unknown target in the query', 'target=LDAP'),
  // Bodies where none belong, and bodies of the wrong kind.
  bad('GET with a JSON body', 'admin', 'GET', USERS, { json: { type: 'User' } }),
  bad('DELETE with a JSON body', 'admin', 'DELETE', `${USERS}/nobody`, { json: { type: 'User' } }),
  bad(
    'JSON sent as text/plain',
    'none',
    'POST',
    SESSION,
    { body: JSON.stringify(withVersion(goodVersion)), headers: { 'Content-Type': 'text/plain' } },
    415,
    MEDIA,
  ),
  bad(
    'JSON without a Content-Type',
    'none',
    'POST',
    SESSION,
    { body: JSON.stringify(withVersion(goodVersion)) },
    415,
    MEDIA,
  ),
  bad(
    'JSON in Latin-1',
    'none',
    'POST',
    SESSION,
    { body: '{}', headers: { 'Content-Type': 'application/json; charset=latin1' } },
    415,
    MEDIA,
  ),
  bad(
    'unknown content encoding',
    'none',
    'POST',
    SESSION,
    { body: '{}', headers: { ...JSON_TYPE, 'Content-Encoding': 'compress' } },
    415,
    MEDIA,
  ),
  bad(
    'gzip header over plain bytes',
    'none',
    'POST',
    SESSION,
    { body: '{}', headers: { ...JSON_TYPE, 'Content-Encoding': 'gzip' } },
    400,
    MALFORMED,
  ),
  bad(
    'huge body',
    'none',
    'POST',
    SESSION,
    { json: { ...withVersion(goodVersion), client: 'x'.repeat(70_000) } },
    413,
    'exception.webservices.request.too.large',
  ),
  bad(
    'gzip bomb',
    'none',
    'POST',
    SESSION,
    {
      body: gzipSync(`{"client":"${' '.repeat(10_000_000)}"}`),
      headers: { ...JSON_TYPE, 'Content-Encoding': 'gzip' },
    },
    413,
    'exception.webservices.request.too.large',
  ),
  bad(
    'malformed percent escape in the path',
    'admin',
    'GET',
    `${USERS}/%E0%A4%A`,
    {},
    400,
    MALFORMED,
  ),
];

describe('bad inputs answer an ErrorResult with a 4xx, never a crash or a 500', () => {
  test('there are at least 30 of them', () => {
    expect(BAD_INPUTS.length).toBeGreaterThanOrEqual(30);
  });

  test.each(BAD_INPUTS.map((b) => [b.name, b] as const))('%s', async (_, input) => {
    const cookie = { none: undefined, unauthenticated, admin, adminV1 }[input.who];
    const answer = await raw(e.url, input.method, input.path, {
      ...input.request,
      session: cookie,
    });
    expect(answer.json, answer.text).toMatchObject({
      type: 'ErrorResult',
      status: 'ERROR',
      error: { type: 'APIError', id: input.id, commandOutput: null },
    });
    expect(answer.status).toBe(input.status);
    expect(answer.headers['content-type']).toMatch(/^application\/json/);
    if (input.id === INVALID) expect(answer.json.error.diagnoses.length).toBeGreaterThan(0);
    expect(answer.setCookies).toEqual([]);
  });

  test('headers too large for the HTTP parser still get an ErrorResult (431)', async () => {
    const answer = await raw(e.url, 'GET', USERS, {
      // Beyond the 64 KB the engine accepts (the gateway's identity headers can be 24 KB).
      headers: { Cookie: `x=${'a'.repeat(70_000)}` },
    });
    expect(answer.status).toBe(431);
    expect(answer.json.error.id).toBe('exception.webservices.request.headers.too.large');
  });

  test('a request line that is not HTTP gets a 400 ErrorResult', async () => {
    const text = await rawSocket(e.url, 'HELLO ENGINE\r\n\r\n');
    expect(text).toMatch(/^HTTP\/1\.1 400 /);
    expect(JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4)).error.id).toBe(MALFORMED);
  });

  test('afterwards the engine still answers every session, and logged no unexpected error', async () => {
    for (const cookie of [admin, adminV1]) {
      expect((await raw(e.url, 'GET', SESSION, { session: cookie })).status).toBe(200);
    }
    expect((await raw(e.url, 'GET', CURRENT_USER, { session: unauthenticated })).status).toBe(403);
    expect(logged).toEqual([]);
  });
});
