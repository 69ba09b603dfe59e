import { describe, expect, test } from 'vitest';
import {
  ADMIN_PASSWORD,
  adminSession,
  createUser,
  engine,
  errorOf,
  login,
  openSession,
} from './support/engine.js';
import { raw } from './support/raw-http.js';

const USERS = '/resources/json/service/user';
const v = (major: number, minor: number) => ({ major, minor, micro: 0 });

describe('results are translated to what the session version knew', () => {
  test.each([
    ['1.0', v(1, 0), ['admin', 'fullName', 'name', 'target', 'type']],
    ['1.1', v(1, 1), ['admin', 'email', 'fullName', 'name', 'target', 'type']],
    ['1.2', v(1, 2), ['admin', 'email', 'fullName', 'lastLogin', 'name', 'target', 'type']],
    ['2.0', v(2, 0), ['email', 'fullName', 'lastLogin', 'name', 'role', 'target', 'type']],
    [
      '2.1',
      v(2, 1),
      ['email', 'enabled', 'fullName', 'lastLogin', 'name', 'role', 'target', 'type'],
    ],
  ])(
    'a %s session sees exactly its fields, in reads and in the login result',
    async (_, version, fields) => {
      const e = await engine();
      const session = await openSession(e, version);
      const loggedIn = await raw(e.url, 'POST', '/resources/json/service/login', {
        session,
        json: { type: 'LoginRequest', username: 'admin', password: ADMIN_PASSWORD },
      });
      expect(Object.keys(loggedIn.json.result.user).sort()).toEqual(fields);
      const cookie = loggedIn.setCookies[0]!.split(';')[0]!.split('=')[1]!;
      const read = await raw(e.url, 'GET', `${USERS}/admin`, { session: cookie });
      expect(Object.keys(read.json.result).sort()).toEqual(fields);
      const list = await raw(e.url, 'GET', USERS, { session: cookie });
      expect(Object.keys(list.json.result.items[0]).sort()).toEqual(fields);
    },
  );

  test('a newer requested minor runs at the native one: an engine at 1.1 hides lastLogin from a 1.2 client', async () => {
    const e = await engine({ versions: [v(1, 1)] });
    const session = await adminSession(e, v(1, 2));
    const read = await raw(e.url, 'GET', `${USERS}/admin`, { session });
    expect(read.json.result).not.toHaveProperty('lastLogin');
    expect(read.json.result).toHaveProperty('email');
  });

  test('major 1 says admin: true where major 2 says role: ADMINISTRATOR', async () => {
    const e = await engine();
    const one = await adminSession(e, v(1, 2));
    const two = await adminSession(e, v(2, 1));
    expect((await raw(e.url, 'GET', `${USERS}/admin`, { session: one })).json.result.admin).toBe(
      true,
    );
    expect((await raw(e.url, 'GET', `${USERS}/admin`, { session: two })).json.result.role).toBe(
      'ADMINISTRATOR',
    );
  });
});

describe('inputs are read as the session version knew them', () => {
  test('a field added later is unknown to an older session, named as such', async () => {
    const e = await engine();
    const admin = await adminSession(e, v(1, 0));
    const answer = await raw(e.url, 'POST', USERS, {
      session: admin,
      json: { type: 'User', name: 'old', password: 'password-1', email: 'old@example.org' },
    });
    expect(answer.status).toBe(400);
    expect(errorOf(answer).diagnoses).toEqual([
      {
        type: 'Diagnosis',
        field: 'email',
        message: 'not known to API version 1.0.0 (the field exists since 1.1)',
      },
    ]);
  });

  test('a field removed in a major is unknown to that major', async () => {
    const e = await engine();
    const admin = await adminSession(e, v(2, 0));
    const answer = await raw(e.url, 'POST', USERS, {
      session: admin,
      json: { type: 'User', name: 'new', password: 'password-1', admin: true },
    });
    expect(answer.status).toBe(400);
    expect(errorOf(answer).diagnoses[0]).toMatchObject({
      field: 'admin',
      message: expect.stringContaining('before major 2'),
    });
  });

  test('fields an older session cannot send get their defaults on create', async () => {
    const e = await engine();
    const old = await adminSession(e, v(1, 0));
    await createUser(e, old, { name: 'olduser', password: 'password-1', admin: true });
    const now = await adminSession(e, v(2, 1));
    const read = await raw(e.url, 'GET', `${USERS}/olduser`, { session: now });
    expect(read.json.result).toMatchObject({
      email: '',
      enabled: true,
      role: 'ADMINISTRATOR',
      lastLogin: null,
    });
  });

  test('an update from an older session leaves the fields it does not know alone', async () => {
    const e = await engine();
    const now = await adminSession(e, v(2, 1));
    await createUser(e, now, {
      name: 'kept',
      password: 'password-1',
      enabled: false,
      email: 'k@example.org',
    });
    const old = await adminSession(e, v(1, 0));
    const update = await raw(e.url, 'POST', `${USERS}/kept`, {
      session: old,
      json: { type: 'User', fullName: 'Kept' },
    });
    expect(update.json.result).toEqual({
      type: 'User',
      name: 'kept',
      target: 'SYSTEM',
      fullName: 'Kept',
      admin: false,
    });
    const read = await raw(e.url, 'GET', `${USERS}/kept`, { session: now });
    expect(read.json.result).toMatchObject({
      fullName: 'Kept',
      enabled: false,
      email: 'k@example.org',
    });
  });

  test('a user created by a major-2 session logs in through a major-1 session', async () => {
    const e = await engine();
    const two = await adminSession(e, v(2, 1));
    await createUser(e, two, { name: 'both', password: 'password-1' });
    await login(e, await openSession(e, v(1, 0)), 'both', 'password-1');
  });
});
