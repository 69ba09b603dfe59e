import { describe, expect, test } from 'vitest';
import { startEngine } from '../../../engine/index.js';
import {
  ADMIN_PASSWORD,
  adminSession,
  apiSession,
  engine,
  errorOf,
  login,
  manualClock,
  openSession,
} from './support/engine.js';
import { raw, sessionSet } from './support/raw-http.js';

// A call that refuses a dead session with its own status (GET session is a probe: HTTP 200).
const CURRENT_USER = '/resources/json/service/user/current';

const SESSION = '/resources/json/service/session';

describe('state table row 1: no session → POST session → established, unauthenticated', () => {
  test('a supported major opens a session: native version in the result, id in a cookie', async () => {
    const e = await engine();
    const answer = await raw(e.url, 'POST', SESSION, {
      json: apiSession({ major: 2, minor: 1, micro: 0 }),
    });
    expect(answer.status).toBe(200);
    expect(answer.headers['content-type']).toMatch(/^application\/json/);
    expect(answer.json).toEqual({
      type: 'OKResult',
      status: 'OK',
      result: {
        type: 'APISession',
        version: { type: 'APIVersion', major: 2, minor: 1, micro: 0 },
        locale: 'en_US',
        client: null,
      },
      job: null,
      action: null,
    });
    expect(answer.setCookies).toHaveLength(1);
    const [cookie] = answer.setCookies;
    expect(cookie).toMatch(/; HttpOnly/);
    expect(cookie).toMatch(/; SameSite=Strict/);
    expect(cookie).toMatch(/; Path=\//);
    expect(cookie).not.toMatch(/Secure/);
  });

  test('JSON with an explicit UTF-8 charset or a +json media type is accepted', async () => {
    const e = await engine();
    for (const type of ['application/json; charset=utf-8', 'application/vnd.engine+json']) {
      const answer = await raw(e.url, 'POST', SESSION, {
        headers: { 'Content-Type': type },
        json: apiSession({ major: 2, minor: 1, micro: 0 }),
      });
      expect(answer.status, type).toBe(200);
    }
  });

  test('session ids are random and carry at least 128 bits', async () => {
    const e = await engine();
    const ids = await Promise.all(Array.from({ length: 20 }, () => openSession(e)));
    expect(new Set(ids).size).toBe(20);
    for (const id of ids) expect(Buffer.from(id, 'base64url').length).toBeGreaterThanOrEqual(16);
  });

  test('an unsupported major is refused with invalid.version, and no cookie is set', async () => {
    const e = await engine();
    const answer = await raw(e.url, 'POST', SESSION, {
      json: apiSession({ major: 7, minor: 0, micro: 0 }),
    });
    expect(answer.status).toBe(400);
    expect(errorOf(answer).id).toBe('exception.webservices.session.invalid.version');
    expect(errorOf(answer).details).toContain('supported major versions: 2, 1');
    expect(answer.setCookies).toEqual([]);
  });

  test('an older minor of a supported major is accepted; the result still holds the native version', async () => {
    const e = await engine({ versions: [{ major: 2, minor: 1, micro: 3 }] });
    const answer = await raw(e.url, 'POST', SESSION, {
      json: apiSession({ major: 2, minor: 0, micro: 0 }),
    });
    expect(answer.status).toBe(200);
    expect(answer.json.result.version).toEqual({
      type: 'APIVersion',
      major: 2,
      minor: 1,
      micro: 3,
    });
  });

  test('a newer minor than the engine knows is accepted at the native version', async () => {
    const e = await engine();
    const answer = await raw(e.url, 'POST', SESSION, {
      json: apiSession({ major: 1, minor: 9, micro: 9 }),
    });
    expect(answer.status).toBe(200);
    expect(answer.json.result.version).toEqual({
      type: 'APIVersion',
      major: 1,
      minor: 2,
      micro: 0,
    });
  });

  test('the configured majors decide: an engine of major 3 alone refuses 2 and accepts 3', async () => {
    const e = await engine({ versions: [{ major: 3, minor: 0, micro: 1 }] });
    const refused = await raw(e.url, 'POST', SESSION, {
      json: apiSession({ major: 2, minor: 1, micro: 0 }),
    });
    expect(errorOf(refused).id).toBe('exception.webservices.session.invalid.version');
    const accepted = await raw(e.url, 'POST', SESSION, {
      json: apiSession({ major: 3, minor: 0, micro: 0 }),
    });
    expect(accepted.json.result.version).toEqual({
      type: 'APIVersion',
      major: 3,
      minor: 0,
      micro: 1,
    });
  });

  test('the locale is the one asked for, else the engine default; client comes back null', async () => {
    const e = await engine({ defaultLocale: 'fr_CH' });
    const asked = await raw(e.url, 'POST', SESSION, {
      json: apiSession(
        { major: 2, minor: 1, micro: 0 },
        { locale: 'de_DE', client: { name: 'cli' } },
      ),
    });
    expect(asked.json.result).toMatchObject({ locale: 'de_DE', client: null });
    const defaulted = await raw(e.url, 'POST', SESSION, {
      json: apiSession({ major: 2, minor: 1, micro: 0 }),
    });
    expect(defaulted.json.result.locale).toBe('fr_CH');
  });

  test('opening a session with a live cookie replaces that session', async () => {
    const e = await engine();
    const first = await adminSession(e);
    const answer = await raw(e.url, 'POST', SESSION, {
      session: first,
      json: apiSession({ major: 2, minor: 1, micro: 0 }),
    });
    expect(sessionSet(answer)).not.toBe(first);
    const old = await raw(e.url, 'GET', CURRENT_USER, { session: first });
    expect(old.status).toBe(401);
    expect(errorOf(old).id).toBe('exception.webservices.session.invalid');
  });

  test('GET on the session path returns the current session', async () => {
    const e = await engine({ versions: [{ major: 1, minor: 2, micro: 5 }] });
    const session = await adminSession(e, { major: 1, minor: 0, micro: 0 });
    const answer = await raw(e.url, 'GET', SESSION, { session });
    expect(answer.status).toBe(200);
    expect(answer.json.result).toEqual({
      type: 'APISession',
      version: { type: 'APIVersion', major: 1, minor: 2, micro: 5 },
      locale: 'en_US',
      client: null,
    });
  });
});

describe('the Secure flag', () => {
  test('is set when nginx says the client came over HTTPS (X-Forwarded-Proto)', async () => {
    const e = await engine();
    const answer = await raw(e.url, 'POST', SESSION, {
      headers: { 'X-Forwarded-Proto': 'https' },
      json: apiSession({ major: 2, minor: 1, micro: 0 }),
    });
    expect(answer.setCookies[0]).toMatch(/; Secure/);
    const relogged = await raw(e.url, 'POST', '/resources/json/service/login', {
      headers: { 'X-Forwarded-Proto': 'https' },
      session: sessionSet(answer),
      json: { type: 'LoginRequest', username: 'admin', password: ADMIN_PASSWORD },
    });
    expect(relogged.setCookies[0]).toMatch(/; Secure/);
  });

  test('can be forced on or off by setting', async () => {
    const always = await engine({ cookieSecure: 'always' });
    const on = await raw(always.url, 'POST', SESSION, {
      json: apiSession({ major: 2, minor: 1, micro: 0 }),
    });
    expect(on.setCookies[0]).toMatch(/; Secure/);
    const never = await engine({ cookieSecure: 'never' });
    const off = await raw(never.url, 'POST', SESSION, {
      headers: { 'X-Forwarded-Proto': 'https' },
      json: apiSession({ major: 2, minor: 1, micro: 0 }),
    });
    expect(off.setCookies[0]).not.toMatch(/Secure/);
  });
});

describe('state table row 3: any session → restart → no session', () => {
  test('a restarted engine on the same port knows none of the old cookies', async () => {
    const first = await startEngine({ adminPassword: ADMIN_PASSWORD });
    const authenticated = await adminSession(first);
    const unauthenticated = await openSession(first);
    await first.close();
    const second = await engine({ port: first.port });
    for (const session of [authenticated, unauthenticated]) {
      const answer = await raw(second.url, 'GET', CURRENT_USER, { session });
      expect(answer.status).toBe(401);
      expect(errorOf(answer).id).toBe('exception.webservices.session.invalid');
    }
  });
});

describe('idle expiry and the session cap', () => {
  test('a session used within the idle time lives on; one left idle for it expires', async () => {
    const clock = manualClock();
    const e = await engine({ now: clock.now, sessionIdleSeconds: 60 });
    const session = await adminSession(e);
    clock.advance(59_999);
    expect((await raw(e.url, 'GET', SESSION, { session })).status).toBe(200);
    clock.advance(59_999);
    expect((await raw(e.url, 'GET', SESSION, { session })).status).toBe(200);
    clock.advance(60_000);
    const expired = await raw(e.url, 'GET', CURRENT_USER, { session });
    expect(expired.status).toBe(401);
    expect(errorOf(expired).id).toBe('exception.webservices.session.invalid');
  });

  test('past the cap a new session is refused with session.limit and Retry-After; freed slots are reused', async () => {
    const clock = manualClock();
    const e = await engine({ now: clock.now, maxSessions: 2, sessionIdleSeconds: 100 });
    const first = await adminSession(e);
    clock.advance(30_000);
    await openSession(e);
    const refused = await raw(e.url, 'POST', SESSION, {
      json: apiSession({ major: 2, minor: 1, micro: 0 }),
    });
    expect(refused.status).toBe(503);
    expect(errorOf(refused).id).toBe('exception.webservices.session.limit');
    expect(refused.headers['retry-after']).toBe('70');
    expect(refused.setCookies).toEqual([]);

    expect((await raw(e.url, 'DELETE', SESSION, { session: first })).status).toBe(200);
    const third = await openSession(e);
    clock.advance(100_000);
    // Both remaining sessions expired: room for two again.
    await openSession(e);
    await openSession(e);
    const expired = await raw(e.url, 'GET', SESSION, { session: third });
    expect(errorOf(expired).id).toBe('exception.webservices.session.invalid');
  });
});

describe('calls without a usable session', () => {
  test('no cookie: session.missing (401); an unknown or malformed cookie: session.invalid (401)', async () => {
    const e = await engine();
    const missing = await raw(e.url, 'GET', '/resources/json/service/user');
    expect(missing.status).toBe(401);
    expect(errorOf(missing).id).toBe('exception.webservices.session.missing');
    for (const session of ['A'.repeat(43), 'not-a-session', '']) {
      const invalid = await raw(e.url, 'GET', '/resources/json/service/user', { session });
      expect(invalid.status).toBe(401);
      expect(errorOf(invalid).id).toBe('exception.webservices.session.invalid');
    }
  });

  test('the login itself needs a session', async () => {
    const e = await engine();
    const answer = await raw(e.url, 'POST', '/resources/json/service/login', {
      json: { type: 'LoginRequest', username: 'admin', password: ADMIN_PASSWORD },
    });
    expect(answer.status).toBe(401);
    expect(errorOf(answer).id).toBe('exception.webservices.session.missing');
    expect(answer.setCookies).toEqual([]);
  });

  test('a logged-in session keeps working after its pre-login cookie is refused', async () => {
    const e = await engine();
    const before = await openSession(e);
    const after = await login(e, before, 'admin', ADMIN_PASSWORD);
    expect((await raw(e.url, 'GET', CURRENT_USER, { session: before })).status).toBe(401);
    expect((await raw(e.url, 'GET', SESSION, { session: after })).status).toBe(200);
  });
});
