import { describe, expect, test } from 'vitest';
import { ROUTES } from '../../../engine/routes/table.js';
import {
  ADMIN_PASSWORD,
  adminSession,
  createUser,
  engine,
  errorOf,
  login,
  openSession,
} from './support/engine.js';
import { raw, sessionSet } from './support/raw-http.js';

// A call that refuses a dead session with its own status (GET session is a probe: HTTP 200).
const CURRENT_USER = '/resources/json/service/user/current';

const LOGIN = '/resources/json/service/login';
const SESSION = '/resources/json/service/session';

function loginRequest(username: string, password: string, target?: string) {
  return { type: 'LoginRequest', username, password, ...(target ? { target } : {}) };
}

describe('state table row 2: established, unauthenticated → login → authenticated', () => {
  test('a valid password logs in, returns the user and a new cookie; the old one stops working', async () => {
    const e = await engine();
    const before = await openSession(e);
    const answer = await raw(e.url, 'POST', LOGIN, {
      session: before,
      json: loginRequest('admin', ADMIN_PASSWORD),
    });
    expect(answer.status).toBe(200);
    expect(answer.json.result).toMatchObject({
      type: 'LoginResult',
      user: { type: 'User', name: 'admin', target: 'SYSTEM', role: 'ADMINISTRATOR' },
    });
    const after = sessionSet(answer)!;
    expect(after).toBeDefined();
    expect(after).not.toBe(before);
    expect(answer.setCookies[0]).toMatch(/HttpOnly; SameSite=Strict/);
    const old = await raw(e.url, 'GET', CURRENT_USER, { session: before });
    expect(old.status).toBe(401);
    expect(errorOf(old).id).toBe('exception.webservices.session.invalid');
    expect((await raw(e.url, 'GET', SESSION, { session: after })).status).toBe(200);
  });

  test('a wrong password, an unknown user and a wrong target all fail alike; the session may try again', async () => {
    const e = await engine();
    const admin = await adminSession(e);
    await createUser(e, admin, { name: 'dora', password: 'domain-secret', target: 'DOMAIN' });
    const session = await openSession(e);
    const attempts = [
      loginRequest('admin', 'wrong password'),
      loginRequest('nobody', ADMIN_PASSWORD),
      loginRequest('admin', ADMIN_PASSWORD, 'DOMAIN'),
      loginRequest('dora', 'domain-secret'),
      loginRequest('dora', 'domain-secret', 'SYSTEM'),
    ];
    const bodies = [];
    for (const json of attempts) {
      const answer = await raw(e.url, 'POST', LOGIN, { session, json });
      expect(answer.status).toBe(401);
      expect(answer.setCookies).toEqual([]);
      bodies.push(answer.json);
    }
    expect(errorOf({ json: bodies[0] }).id).toBe('exception.webservices.login.failed');
    for (const body of bodies) expect(body).toEqual(bodies[0]);
    await login(e, session, 'dora', 'domain-secret', 'DOMAIN');
  });

  test('a disabled user cannot log in', async () => {
    const e = await engine();
    const admin = await adminSession(e);
    await createUser(e, admin, { name: 'off', password: 'password-1', enabled: false });
    const answer = await raw(e.url, 'POST', LOGIN, {
      session: await openSession(e),
      json: loginRequest('off', 'password-1'),
    });
    expect(errorOf(answer).id).toBe('exception.webservices.login.failed');
  });

  test('an authenticated session cannot log in again (409)', async () => {
    const e = await engine();
    const session = await adminSession(e);
    const answer = await raw(e.url, 'POST', LOGIN, {
      session,
      json: loginRequest('admin', ADMIN_PASSWORD),
    });
    expect(answer.status).toBe(409);
    expect(errorOf(answer).id).toBe('exception.webservices.login.already.authenticated');
    expect(answer.setCookies).toEqual([]);
  });

  test('the first administrator takes its name and password from the settings, or a generated password', async () => {
    const named = await engine({ adminUser: 'root', adminPassword: 'from-the-environment' });
    await login(named, await openSession(named), 'root', 'from-the-environment');
    const generated = await engine({ adminPassword: undefined });
    expect(generated.generatedAdminPassword).toMatch(/^[A-Za-z0-9_-]{24}$/);
    await login(
      generated,
      await openSession(generated),
      'admin',
      generated.generatedAdminPassword!,
    );
  });
});

describe('an unauthenticated session may call nothing but the login', () => {
  // Calls that need no session at all: opening one, and the public reference.
  const open = new Set(['POST /resources/json/service/session', 'GET /api']);
  const guarded = ROUTES.filter((r) => !open.has(`${r.method} ${r.path}`) && r.path !== LOGIN);

  test.each(guarded.map((r) => [r.method, r.path, r.probe === true] as const))(
    '%s %s → refused (403, or 200 for the probe GET session)',
    async (method, path, probe) => {
      const e = await engine();
      const session = await openSession(e);
      const answer = await raw(e.url, method, path.replace(':name', 'admin'), {
        session,
        ...(method === 'POST' ? { json: { type: 'User', fullName: 'x' } } : {}),
      });
      expect(answer.status).toBe(probe ? 200 : 403);
      expect(answer.json.type).toBe('ErrorResult');
      expect(errorOf(answer).id).toBe('exception.webservices.session.unauthenticated');
      // Still allowed to log in afterwards.
      await login(e, session, 'admin', ADMIN_PASSWORD);
    },
  );

  test('the list above is not empty and covers sessions, users and whoami', () => {
    expect(guarded.map((r) => r.path)).toEqual(
      expect.arrayContaining([
        SESSION,
        '/resources/json/service/user',
        '/resources/json/service/whoami',
      ]),
    );
  });
});

describe('logout ends the session', () => {
  test.each([
    ['DELETE', SESSION],
    ['POST', `${SESSION}/delete`],
    ['POST', '/resources/json/service/logout'],
  ])('%s %s clears the cookie and kills the session', async (method, path) => {
    const e = await engine();
    const session = await adminSession(e);
    const answer = await raw(e.url, method, path, { session });
    expect(answer.status).toBe(200);
    expect(answer.json.result.type).toBe('APISession');
    expect(answer.setCookies[0]).toMatch(/^engine_session=; .*Max-Age=0/);
    const after = await raw(e.url, 'GET', CURRENT_USER, { session });
    expect(after.status).toBe(401);
    expect(errorOf(after).id).toBe('exception.webservices.session.invalid');
  });
});

describe('sessions follow their user', () => {
  test('deleting or disabling a user ends their sessions; demoting takes effect on the next call', async () => {
    const e = await engine();
    const admin = await adminSession(e);
    for (const name of ['gone', 'disabled', 'demoted']) {
      await createUser(e, admin, { name, password: 'password-1', role: 'ADMINISTRATOR' });
    }
    const gone = await login(e, await openSession(e), 'gone', 'password-1');
    const disabled = await login(e, await openSession(e), 'disabled', 'password-1');
    const demoted = await login(e, await openSession(e), 'demoted', 'password-1');
    await raw(e.url, 'DELETE', '/resources/json/service/user/gone', { session: admin });
    await raw(e.url, 'POST', '/resources/json/service/user/disabled', {
      session: admin,
      json: { type: 'User', enabled: false },
    });
    await raw(e.url, 'POST', '/resources/json/service/user/demoted', {
      session: admin,
      json: { type: 'User', role: 'USER' },
    });
    for (const session of [gone, disabled]) {
      const answer = await raw(e.url, 'GET', SESSION, { session });
      expect(errorOf(answer).id).toBe('exception.webservices.session.invalid');
    }
    const denied = await raw(e.url, 'POST', '/resources/json/service/user', {
      session: demoted,
      json: { type: 'User', name: 'x', password: 'password-1' },
    });
    expect(denied.status).toBe(403);
    expect(errorOf(denied).id).toBe('exception.webservices.permission.denied');
  });

  test('a user recreated under the same name does not inherit the old sessions', async () => {
    const e = await engine();
    const admin = await adminSession(e);
    await createUser(e, admin, { name: 'reborn', password: 'password-1' });
    const session = await login(e, await openSession(e), 'reborn', 'password-1');
    await raw(e.url, 'DELETE', '/resources/json/service/user/reborn', { session: admin });
    await createUser(e, admin, { name: 'reborn', password: 'password-2' });
    expect((await raw(e.url, 'GET', CURRENT_USER, { session })).status).toBe(401);
  });
});
