import { describe, expect, test } from 'vitest';
import {
  ADMIN_PASSWORD,
  adminSession,
  apiSession,
  createUser,
  engine,
  errorOf,
  login,
  manualClock,
  openSession,
} from './support/engine.js';
import { raw, sessionSet } from './support/raw-http.js';

// What real Delphix clients rely on (issue 11); the conformance tests replay the clients
// themselves through the gateway, these pin each rule against the engine alone.
const SESSION = '/resources/json/service/session';
const CURRENT_USER = '/resources/json/service/user/current';

describe('GET session is a probe: refusals are ErrorResults with HTTP 200', () => {
  test('no cookie, a dead cookie and an unauthenticated session are each told apart', async () => {
    const e = await engine();
    const none = await raw(e.url, 'GET', SESSION);
    expect(none.status).toBe(200);
    expect(errorOf(none).id).toBe('exception.webservices.session.missing');
    const dead = await raw(e.url, 'GET', SESSION, { session: 'A'.repeat(43) });
    expect(dead.status).toBe(200);
    expect(errorOf(dead).id).toBe('exception.webservices.session.invalid');
    const unauthenticated = await raw(e.url, 'GET', SESSION, { session: await openSession(e) });
    expect(unauthenticated.status).toBe(200);
    expect(errorOf(unauthenticated).id).toBe('exception.webservices.session.unauthenticated');
    const live = await raw(e.url, 'GET', SESSION, { session: await adminSession(e) });
    expect(live.json).toMatchObject({ type: 'OKResult', result: { type: 'APISession' } });
  });

  test('every other call keeps its refusal status', async () => {
    const e = await engine();
    expect((await raw(e.url, 'GET', CURRENT_USER)).status).toBe(401);
    const unauthenticated = await openSession(e);
    expect((await raw(e.url, 'GET', CURRENT_USER, { session: unauthenticated })).status).toBe(403);
  });
});

describe('session locale: the protocol spelling or a BCP 47 tag, answered as <language>_<COUNTRY>', () => {
  test.each([
    ['en-US', 'en_US'],
    ['en_US', 'en_US'],
    ['fr-ca', 'fr_CA'],
    ['DE-de', 'de_DE'],
  ])('%s → %s', async (sent, answered) => {
    const e = await engine();
    const answer = await raw(e.url, 'POST', SESSION, {
      json: apiSession({ major: 1, minor: 9, micro: 0 }, { locale: sent, client: 'delphixpy' }),
    });
    expect(answer.status).toBe(200);
    expect(answer.json.result.locale).toBe(answered);
  });

  test.each(['en', 'english', 'en-USA', 'e1-US', ''])('%j is refused', async (locale) => {
    const e = await engine();
    const answer = await raw(e.url, 'POST', SESSION, {
      json: apiSession({ major: 2, minor: 1, micro: 0 }, { locale }),
    });
    expect(answer.status).toBe(400);
    const fields = errorOf(answer).diagnoses.map((d) => d.field);
    expect(fields.length).toBeGreaterThan(0);
    expect(new Set(fields)).toEqual(new Set(['locale']));
  });
});

describe('LoginRequest.keepAliveMode', () => {
  test('KEEP_ALIVE_HEADER_ONLY: only calls with KeepSessionAlive: true keep the session alive', async () => {
    const clock = manualClock();
    const e = await engine({ now: clock.now, sessionIdleSeconds: 60 });
    const answer = await raw(e.url, 'POST', '/resources/json/service/login', {
      session: await openSession(e),
      json: {
        type: 'LoginRequest',
        username: 'admin',
        password: ADMIN_PASSWORD,
        keepAliveMode: 'KEEP_ALIVE_HEADER_ONLY',
      },
    });
    expect(answer.status).toBe(200);
    const session = sessionSet(answer)!;
    clock.advance(40_000);
    expect((await raw(e.url, 'GET', CURRENT_USER, { session })).status).toBe(200);
    clock.advance(40_000);
    // 80 s after the last keep-alive: the plain call above did not refresh it.
    expect((await raw(e.url, 'GET', CURRENT_USER, { session })).status).toBe(401);

    const kept = await login(e, await openSession(e), 'admin', ADMIN_PASSWORD);
    const header = { KeepSessionAlive: 'true' };
    clock.advance(40_000);
    expect((await raw(e.url, 'GET', CURRENT_USER, { session: kept, headers: header })).status).toBe(
      200,
    );
    clock.advance(40_000);
    expect((await raw(e.url, 'GET', CURRENT_USER, { session: kept })).status).toBe(200);
  });

  test('ALL_REQUESTS is the default; any other value is refused', async () => {
    const e = await engine();
    for (const keepAliveMode of ['ALL_REQUESTS', undefined]) {
      await raw(e.url, 'POST', '/resources/json/service/login', {
        session: await openSession(e),
        json: { type: 'LoginRequest', username: 'admin', password: ADMIN_PASSWORD, keepAliveMode },
      }).then((a) => expect(a.status).toBe(200));
    }
    const bad = await raw(e.url, 'POST', '/resources/json/service/login', {
      session: await openSession(e),
      json: { type: 'LoginRequest', username: 'admin', password: 'x', keepAliveMode: 'FOREVER' },
    });
    expect(bad.status).toBe(400);
    expect(errorOf(bad).diagnoses).toEqual([expect.objectContaining({ field: 'keepAliveMode' })]);
  });
});

describe('the /resources/json/delphix namespace serves the same calls, with the same rules', () => {
  test('session, login, about, user/current and logout under delphix/', async () => {
    const e = await engine();
    const opened = await raw(e.url, 'POST', '/resources/json/delphix/session', {
      json: apiSession({ major: 1, minor: 4, micro: 3 }),
    });
    expect(opened.status).toBe(200);
    const before = sessionSet(opened)!;
    // Before login only the login, here as well.
    const about = await raw(e.url, 'GET', '/resources/json/delphix/about', { session: before });
    expect(about.status).toBe(403);
    expect(errorOf(about).id).toBe('exception.webservices.session.unauthenticated');
    const loggedIn = await raw(e.url, 'POST', '/resources/json/delphix/login', {
      session: before,
      json: { type: 'LoginRequest', username: 'admin', password: ADMIN_PASSWORD },
    });
    const session = sessionSet(loggedIn)!;
    const info = await raw(e.url, 'GET', '/resources/json/delphix/about', { session });
    expect(info.json).toEqual({
      type: 'OKResult',
      status: 'OK',
      job: null,
      action: null,
      result: {
        type: 'PublicSystemInfo',
        productName: 'Data engine',
        apiVersion: { type: 'APIVersion', major: 2, minor: 1, micro: 0 },
        apiVersions: [
          { type: 'APIVersion', major: 2, minor: 1, micro: 0 },
          { type: 'APIVersion', major: 1, minor: 2, micro: 0 },
        ],
      },
    });
    const me = await raw(e.url, 'GET', '/resources/json/delphix/user/current', { session });
    expect(me.json.result).toMatchObject({ type: 'User', name: 'admin' });
    const out = await raw(e.url, 'POST', '/resources/json/delphix/logout', {
      session,
      json: {},
    });
    expect(out.status).toBe(200);
    expect((await raw(e.url, 'GET', CURRENT_USER, { session })).status).toBe(401);
  });

  test('the old /resources/json/users is gone: 404', async () => {
    const e = await engine();
    const answer = await raw(e.url, 'GET', '/resources/json/users', {
      session: await adminSession(e),
    });
    expect(answer.status).toBe(404);
    expect(errorOf(answer).id).toBe('exception.webservices.endpoint.missing');
  });
});

describe('users: created with 200, "current" reserved', () => {
  test('create answers 200 with an OKResult; a user cannot be named current', async () => {
    const e = await engine();
    const admin = await adminSession(e);
    const created = await raw(e.url, 'POST', '/resources/json/service/user', {
      session: admin,
      json: { type: 'User', name: 'ops', password: 'password-1' },
    });
    expect(created.status).toBe(200);
    expect(created.json).toMatchObject({ type: 'OKResult', status: 'OK', result: { name: 'ops' } });
    const reserved = await raw(e.url, 'POST', '/resources/json/service/user', {
      session: admin,
      json: { type: 'User', name: 'current', password: 'password-1' },
    });
    expect(reserved.status).toBe(400);
    expect(errorOf(reserved).diagnoses).toEqual([expect.objectContaining({ field: 'name' })]);
    const ops = await login(e, await openSession(e), 'ops', 'password-1');
    const me = await raw(e.url, 'GET', CURRENT_USER, { session: ops });
    expect(me.json.result).toMatchObject({ name: 'ops', role: 'USER' });
    await createUser(e, admin, { name: 'second', password: 'password-2' });
  });
});

describe('several session cookies: the first live one counts, as Tomcat does behind real engines', () => {
  test('a pinned pre-login cookie beside the live one still reaches the session', async () => {
    const e = await engine();
    const before = await openSession(e);
    const after = await login(e, before, 'admin', ADMIN_PASSWORD);
    const both = await raw(e.url, 'GET', CURRENT_USER, {
      headers: { Cookie: `engine_session=${before}; engine_session=${after}` },
    });
    expect(both.status).toBe(200);
    const staleOnly = await raw(e.url, 'GET', CURRENT_USER, { session: before });
    expect(staleOnly.status).toBe(401);
    expect(errorOf(staleOnly).id).toBe('exception.webservices.session.invalid');
  });
});
