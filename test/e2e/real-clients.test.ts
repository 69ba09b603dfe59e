import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { CLIENTS } from '../support/management.js';
import { startNativeStack } from '../support/native-stack.js';
import { type Answer, Jar, replayer } from '../support/replay.js';
import type { Stack } from '../support/stack.js';

// Each test replays one public client's exact request sequence (paths, headers, bodies, cookie
// handling) through the native gateway with an API key, and checks what that client parses.
// Where a client cannot work against this gateway, the test pins what it gets and the comment
// says why (docs/decisions/20261123-real-clients.md). Sources are named per test.

const ENGINE_USER = 'admin';
const ENGINE_PASSWORD = 'engine-admin-password';

let stack: Stack;
let send: ReturnType<typeof replayer>;
/** A non-admin API key, as a script talking to the engine would be given. */
let appKey: string;

beforeAll(async () => {
  stack = await startNativeStack();
  send = replayer(stack);
  const created = await send(
    'POST',
    CLIENTS,
    { Authorization: `apk ${stack.adminKey}`, 'Content-Type': 'application/json' },
    JSON.stringify({ name: 'engine scripts', is_admin: false, generate_api_key: true }),
  );
  expect(created.status, created.text).toBe(201);
  appKey = created.body.token;
}, 240_000);
afterAll(() => stack?.close(), 120_000);

const gateway = () => ({ Authorization: `apk ${appKey}` });
const admin = () => ({ Authorization: `apk ${stack.adminKey}` });
const ok = (a: Answer) =>
  a.status === 200 && a.body?.type === 'OKResult' && a.body?.status === 'OK';
const version = (v: { major: number; minor: number; micro: number }) =>
  `${v.major}.${v.minor}.${v.micro}`;

describe('Delphix Engine clients, against the engine behind the gateway', () => {
  test('dxtoolkit (delphix/dxtoolkit lib/Engine.pm: LWP, HTTP::Cookies jar)', async () => {
    const jar = new Jar();
    const headers = () => ({
      ...gateway(),
      'User-Agent': 'Delphix Perl Agent/0.1',
      'Content-Type': 'application/json',
      ...jar.header(),
    });
    const get = async (path: string) => {
      const a = await send('GET', `/${path}`, headers());
      jar.take(a.setCookies);
      return a;
    };
    const post = async (path: string, json: string) => {
      const a = await send('POST', `/${path}`, headers(), json);
      jar.take(a.setCookies);
      return a;
    };
    // getSession: any non-2xx is "engine could be down"; 2xx with status ERROR is "no session".
    const probe = await get('resources/json/delphix/session');
    expect(probe.status).toBe(200);
    expect(probe.body.status).toBe('ERROR');
    // Without -dever it asks `about` before logging in; the seed allows only the login there,
    // so dxtoolkit says "Can't determine Delphix API version" and stops.
    expect(ok(await post('resources/json/delphix/session', sessionBody(1, 3, 0)))).toBe(true);
    const about = await get('resources/json/delphix/about');
    expect(about.status).toBe(403);
    expect(about.body.error.id).toBe('exception.webservices.session.unauthenticated');
    // With -dever 5.2 it opens the session at 1.9.0 and logs in (no @DOMAIN: no target).
    expect(ok(await post('resources/json/delphix/session', sessionBody(1, 9, 0)))).toBe(true);
    const login = await post(
      'resources/json/delphix/login',
      JSON.stringify({ type: 'LoginRequest', username: ENGINE_USER, password: ENGINE_PASSWORD }),
    );
    expect(login.status).toBe(200);
    expect(login.body.status).toBe('OK');
    // The next run finds the session in its cookie file and reads the API version from it.
    const again = await get('resources/json/delphix/session');
    expect(again.body.status).toBe('OK');
    expect(version(again.body.result.version)).toBe('1.2.0');
    const aboutNow = await get('resources/json/delphix/about');
    expect(version(aboutNow.body.result.apiVersion)).toBe('2.1.0');
    const logout = await post('resources/json/delphix/logout', '{}');
    expect(logout.status).toBe(200);
    expect(logout.body.status).toBe('OK');
    expect((await get('resources/json/delphix/session')).body.status).toBe('ERROR');
  });

  test('delphix-go-sdk (delphix/delphix-go-sdk config.go LoadAndValidate: resty with its cookie jar)', async () => {
    // The SDK's url is configured; it appends /session, /login, /user/... to it.
    const url = '/resources/json/service';
    const jar = new Jar();
    const headers = () => ({
      ...gateway(),
      'Content-Type': 'application/json',
      'User-Agent': 'go-resty/1.12.0 (https://github.com/go-resty/resty)',
      ...jar.header(),
    });
    const post = async (path: string, body: unknown) => {
      const a = await send('POST', `${url}${path}`, headers(), JSON.stringify(body));
      jar.take(a.setCookies);
      return a;
    };
    // APISession with locale "en-US" (BCP 47) and an empty client left out by omitempty.
    const session = await post('/session', {
      type: 'APISession',
      version: { type: 'APIVersion', major: 1, minor: 9, micro: 0 },
      locale: 'en-US',
    });
    expect(session.body.status).toBe('OK');
    expect(session.body.result.locale).toBe('en_US');
    const login = await post('/login', {
      type: 'LoginRequest',
      username: ENGINE_USER,
      password: ENGINE_PASSWORD,
    });
    // LoadAndValidate: HTTP 200 and status not ERROR.
    expect(login.status).toBe(200);
    expect(login.body.status).toBe('OK');
    // executeReadAndReturnObject: a 200 whose result is the object.
    const me = await send('GET', `${url}/user/current`, headers());
    expect(me.status).toBe(200);
    expect(me.body.result).toMatchObject({ type: 'User', name: ENGINE_USER });
    // executeListAndReturnResults asserts result is an array; a user list here is a UserList
    // record ({items, total, offset, limit}), so the SDK's list-based finders do not work.
    const list = await send('GET', `${url}/user`, headers());
    expect(Array.isArray(list.body.result)).toBe(false);
    expect(list.body.result.type).toBe('UserList');
  });

  test('virtualization-sdk (delphix/virtualization-sdk delphix_client.py: raw Set-Cookie echo)', async () => {
    let cookie: string | undefined;
    const post = async (resource: string, data: unknown) => {
      const headers: Record<string, string> = { ...gateway(), 'Content-type': 'application/json' };
      if (cookie !== undefined) headers.Cookie = cookie;
      const a = await send('POST', `/resources/json/${resource}`, headers, JSON.stringify(data));
      // It stores the raw header, attributes and all, and sends it back as Cookie.
      if (a.setCookies.length > 0) cookie = a.setCookies.join(', ');
      return a;
    };
    const engineApi = { type: 'APIVersion', major: 1, minor: 11, micro: 0 };
    const session = await post('delphix/session', { type: 'APISession', version: engineApi });
    // __post accepts only HTTP 200 with type OKResult (or DataResult).
    expect(ok(session)).toBe(true);
    expect(cookie).toMatch(/^engine_session=[^;]+; Path=\/; HttpOnly; SameSite=Strict/);
    const login = await post('delphix/login', {
      type: 'LoginRequest',
      username: ENGINE_USER,
      password: ENGINE_PASSWORD,
    });
    expect(ok(login)).toBe(true);
    // The upload itself (delphix/toolkit/requestUploadToken) is a platform call this engine
    // does not have: the client raises HttpError with the ErrorResult's error.
    const upload = await post('delphix/toolkit/requestUploadToken', {});
    expect(upload.status).toBe(404);
    expect(upload.body.error.id).toBe('exception.webservices.endpoint.missing');
  });

  test('delphixpy (delphixpy delphix_engine.py and http_client.py: raw Set-Cookie echo, status 200 or 202)', async () => {
    let cookie: string | undefined;
    const call = async (method: 'GET' | 'POST', path: string, data?: unknown) => {
      const headers: Record<string, string> = {
        ...gateway(),
        'Content-Type': 'application/json',
        'User-Agent': 'Delphix Python Agent',
      };
      if (cookie) headers.Cookie = cookie;
      // post(url, None) sends an empty body.
      const body = method === 'POST' ? (data === undefined ? '' : JSON.stringify(data)) : undefined;
      const a = await send(method, path, headers, body);
      // _handle_response: anything but 200/202 raises HttpError.
      expect([200, 202], a.text).toContain(a.status);
      if (a.setCookies.length > 0) cookie = a.setCookies.join(', ');
      // response_validator.validate: status OK, else RequestError.
      expect(a.body.status, a.text).toBe('OK');
      return a.body.result;
    };
    const session = await call('POST', '/resources/json/delphix/session', {
      type: 'APISession',
      version: { type: 'APIVersion', major: 1, minor: 10, micro: 2 },
      client: 'delphixpy',
      locale: 'en-US',
    });
    expect(session).toMatchObject({ type: 'APISession', locale: 'en_US' });
    await call('POST', '/resources/json/delphix/login', {
      type: 'LoginRequest',
      username: ENGINE_USER,
      password: ENGINE_PASSWORD,
      keepAliveMode: 'ALL_REQUESTS',
      target: 'SYSTEM',
    });
    expect(await call('GET', '/resources/json/delphix/user/current')).toMatchObject({
      name: ENGINE_USER,
    });
    expect(await call('GET', '/resources/json/delphix/about')).toMatchObject({
      type: 'PublicSystemInfo',
    });
    await call('POST', '/resources/json/delphix/logout');
  });

  test('delphix_rb (mickuehl/delphix_rb lib/delphix/connection.rb: keeps the first Set-Cookie only)', async () => {
    let sessionCookie: string | undefined;
    const request = async (method: 'GET' | 'POST', path: string, body?: string) => {
      const headers: Record<string, string> = {
        ...gateway(),
        'Content-Type': 'application/json',
        'User-Agent': 'Delphix/Delphix-API',
      };
      if (sessionCookie) headers.Cookie = sessionCookie;
      const a = await send(method, path, headers, body);
      sessionCookie ??= a.setCookies[0];
      return a;
    };
    const session = await request(
      'POST',
      '/resources/json/delphix/session',
      JSON.stringify({
        type: 'APISession',
        version: { type: 'APIVersion', major: 1, minor: 6, micro: 0 },
      }),
    );
    expect(ok(session)).toBe(true);
    const login = await request(
      'POST',
      '/resources/json/delphix/login',
      JSON.stringify({ type: 'LoginRequest', username: ENGINE_USER, password: ENGINE_PASSWORD }),
    );
    expect(ok(login)).toBe(true);
    // It never takes the new cookie the login sets, but the protocol says that one must be used
    // afterwards and the old one dies: its next call is refused (Excon raises on 401).
    const next = await request('GET', '/resources/json/delphix/user/current');
    expect(next.status).toBe(401);
    expect(next.body.error.id).toBe('exception.webservices.session.invalid');
  });

  test('Delphix.NETSDK (DylanRamsook/Delphix.NETSDK Session.cs: RestSharp 106, pinned cookie plus container)', async () => {
    const base = {
      ...gateway(),
      Accept:
        'application/json, text/json, text/x-json, text/javascript, application/xml, text/xml',
      'User-Agent': 'RestSharp/106.6.10.0',
      'content-header': 'application/json',
      'Content-Type': 'application/json',
    };
    const session = await send(
      'POST',
      '/resources/json/delphix/session',
      base,
      JSON.stringify({
        type: 'APISession',
        version: { type: 'APIVersion', major: 1, minor: 4, micro: 3 },
      }),
    );
    expect(ok(session)).toBe(true);
    // jSessionId = result.Cookies.First(): pinned, and added to every later request.
    const pinned = /^engine_session=([^;]+)/.exec(session.setCookies[0] ?? '')![1]!;
    const login = await send(
      'POST',
      '/resources/json/delphix/login',
      { ...base, Cookie: `engine_session=${pinned}` },
      JSON.stringify({ type: 'LoginRequest', username: ENGINE_USER, password: ENGINE_PASSWORD }),
    );
    expect(ok(login)).toBe(true);
    const fresh = /^engine_session=([^;]+)/.exec(login.setCookies[0] ?? '')![1]!;
    // Later calls carry the pinned cookie (AddCookie) and the container's fresh one: the first
    // live one counts, so they work. With the pinned cookie alone they would be refused.
    const both = await send('GET', '/resources/json/delphix/user/current', {
      ...base,
      Cookie: `engine_session=${pinned}; engine_session=${fresh}`,
    });
    expect(both.status).toBe(200);
    expect(both.body.status).toBe('OK');
    const pinnedOnly = await send('GET', '/resources/json/delphix/user/current', {
      ...base,
      Cookie: `engine_session=${pinned}`,
    });
    expect(pinnedOnly.body.status).toBe('ERROR');
  });
});

describe('DCT clients, against the management API', () => {
  test('dct-sdk-go (delphix/dct-sdk-go ApiClientsApi: create, get, list, update, delete)', async () => {
    const headers = {
      ...admin(),
      'Content-Type': 'application/json',
      Accept: 'application/json',
      'User-Agent': 'OpenAPI-Generator/1.0.0/go',
    };
    const created = await send(
      'POST',
      CLIENTS,
      headers,
      JSON.stringify({ name: 'go-sdk client', is_admin: false, generate_api_key: true }),
    );
    expect(created.status).toBe(201);
    // ApiClientCreateResponse: api_client_entity_id and token.
    const id = created.body.api_client_entity_id as number;
    expect(created.body.token).toMatch(new RegExp(`^${id}\\.`));
    const got = await send('GET', `${CLIENTS}/${id}`, { ...admin(), Accept: 'application/json' });
    expect(got.body).toMatchObject({ id, name: 'go-sdk client', is_admin: false });
    const updated = await send(
      'PUT',
      `${CLIENTS}/${id}`,
      headers,
      JSON.stringify({ name: 'go-sdk client renamed', is_admin: false }),
    );
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({ id, name: 'go-sdk client renamed' });
    const list = await send('GET', `${CLIENTS}?limit=1&sort=-id`, {
      ...admin(),
      Accept: 'application/json',
    });
    expect(list.body.items[0].id).toBe(id);
    expect(list.body.response_metadata).toMatchObject({
      prev_cursor: null,
      total: expect.any(Number),
    });
    expect(typeof list.body.response_metadata.next_cursor).toBe('string');
    // DeleteApiClient reads no body; any 2xx is success.
    expect((await send('DELETE', `${CLIENTS}/${id}`, admin())).status).toBe(200);
  });

  test('dct-sdk-java (delphix/dct-sdk-java ApiClientsApi with Gson: nulls left out, cursor paging)', async () => {
    const headers = {
      ...admin(),
      'Content-Type': 'application/json; charset=utf-8',
      Accept: 'application/json',
      'User-Agent': 'OpenAPI-Generator/1.0.0/java',
    };
    const ids: number[] = [];
    for (const name of ['java-b', 'java-a', 'java-c']) {
      const created = await send(
        'POST',
        CLIENTS,
        headers,
        JSON.stringify({
          name,
          api_client_id: `${name}@idp`,
          is_admin: false,
          generate_api_key: false,
        }),
      );
      expect(created.status).toBe(201);
      expect(created.body.token).toBeUndefined();
      ids.push(created.body.api_client_entity_id);
    }
    // getApiClients(limit, cursor, sort) until next_cursor is null.
    const names: string[] = [];
    let cursor: string | null = null;
    do {
      const query: string = `?limit=2${cursor ? `&cursor=${cursor}` : '&sort=name'}`;
      const page = await send('GET', `${CLIENTS}${query}`, {
        ...admin(),
        Accept: 'application/json',
      });
      expect(page.status).toBe(200);
      names.push(...page.body.items.map((i: { name: string }) => i.name));
      cursor = page.body.response_metadata.next_cursor;
    } while (cursor);
    expect(names.filter((n) => n.startsWith('java-'))).toEqual(['java-a', 'java-b', 'java-c']);
    for (const id of ids) await send('DELETE', `${CLIENTS}/${id}`, admin());
  });

  test('dct-toolkit (mattdelphix/dct-toolkit dct_api-client.py and helpers.py: requests, /v2)', async () => {
    const headers = {
      'content-type': 'application/json',
      accept: 'application/json',
      authorization: `apk ${stack.adminKey}`,
    };
    // It calls cfg.host + "/v2": the seed's management API is /v1 only, so that 404s...
    const v2 = await send('GET', '/v2/management/api-clients', headers);
    expect(v2.status).toBe(404);
    // ...and replayed against /v1: create sends generate_api_key as the string 'true' and no
    // is_admin, which the seed's required boolean fields refuse, every problem at once.
    const refused = await send(
      'POST',
      CLIENTS,
      headers,
      JSON.stringify({ generate_api_key: 'true', api_client_id: 'toolkit@idp', name: 'toolkit' }),
    );
    expect(refused.status).toBe(400);
    expect(refused.body.errors.map((e: { field: string }) => e.field).sort()).toEqual([
      'generate_api_key',
      'is_admin',
    ]);
    const created = await send(
      'POST',
      CLIENTS,
      headers,
      JSON.stringify({
        generate_api_key: true,
        is_admin: false,
        api_client_id: 'toolkit@idp',
        name: 'toolkit',
      }),
    );
    expect(created.status).toBe(201);
    const id = String(created.body.api_client_entity_id);
    // update: PUT {api_client_id, name}, 200, prints rsp['id'].
    const updated = await send(
      'PUT',
      `${CLIENTS}/${id}`,
      headers,
      JSON.stringify({ api_client_id: 'toolkit2@idp', name: 'toolkit2' }),
    );
    expect(updated.status).toBe(200);
    expect(String(updated.body.id)).toBe(id);
    // list: resp.json()['items']; view: the record; delete: 200.
    const list = await send('GET', CLIENTS, headers);
    expect(list.body.items.some((i: { id: number }) => String(i.id) === id)).toBe(true);
    expect((await send('GET', `${CLIENTS}/${id}`, headers)).body.name).toBe('toolkit2');
    expect((await send('DELETE', `${CLIENTS}/${encodeURIComponent(id)}`, headers)).status).toBe(
      200,
    );
  });

  test('terraform-provider-delphix (internal/provider/provider.go configure: apk key, test call)', async () => {
    const headers = {
      Authorization: `apk ${stack.adminKey}`,
      'x-dct-client-name': 'Terraform',
      'User-Agent': 'Terraform/1.9.0 (+https://www.terraform.io) terraform-provider-delphix/4.0.0',
      Accept: 'application/json',
    };
    // The key authenticates (the extra header does no harm), but the provider's test call,
    // GetRegisteredEngines, is DCT's engine registry, which this gateway does not have.
    const engines = await send('GET', '/v1/management/engines', headers);
    expect(engines.status).toBe(404);
    expect(engines.body).toEqual({ errors: [expect.objectContaining({ code: 'NOT_FOUND' })] });
    const user = await send('GET', '/v1/management/engines', {
      ...headers,
      Authorization: `apk ${appKey}`,
    });
    expect(user.status).toBe(403);
  });
});

function sessionBody(major: number, minor: number, micro: number): string {
  return JSON.stringify({
    type: 'APISession',
    version: { type: 'APIVersion', major, minor, micro },
  });
}
