import { describe, expect, test } from 'vitest';
import { adminSession, createUser, engine, errorOf, login, openSession } from './support/engine.js';
import { raw } from './support/raw-http.js';

const USERS = '/resources/json/service/user';

describe('POST creates or updates with a JSON body; GET reads', () => {
  test('create answers 200 with defaults filled in; GET reads the same user back', async () => {
    const e = await engine();
    const admin = await adminSession(e);
    const created = await raw(e.url, 'POST', USERS, {
      session: admin,
      json: { type: 'User', name: 'ann', password: 'password-1', email: 'ann@example.org' },
    });
    expect(created.status).toBe(200);
    expect(created.json.result).toEqual({
      type: 'User',
      name: 'ann',
      target: 'SYSTEM',
      fullName: '',
      email: 'ann@example.org',
      lastLogin: null,
      role: 'USER',
      enabled: true,
    });
    const read = await raw(e.url, 'GET', `${USERS}/ann`, { session: admin });
    expect(read.status).toBe(200);
    expect(read.json.result).toEqual(created.json.result);
  });

  test('update changes only the fields sent', async () => {
    const e = await engine();
    const admin = await adminSession(e);
    await createUser(e, admin, {
      name: 'bob',
      password: 'password-1',
      fullName: 'Bob',
      email: 'b@x',
    });
    const updated = await raw(e.url, 'POST', `${USERS}/bob`, {
      session: admin,
      json: { type: 'User', fullName: 'Robert' },
    });
    expect(updated.status).toBe(200);
    expect(updated.json.result).toMatchObject({ fullName: 'Robert', email: 'b@x', role: 'USER' });
    const password = await raw(e.url, 'POST', `${USERS}/bob`, {
      session: admin,
      json: { type: 'User', password: 'password-2' },
    });
    expect(password.status).toBe(200);
    await login(e, await openSession(e), 'bob', 'password-2');
  });

  test('a user cannot be renamed through update', async () => {
    const e = await engine();
    const admin = await adminSession(e);
    await createUser(e, admin, { name: 'cat', password: 'password-1' });
    const answer = await raw(e.url, 'POST', `${USERS}/cat`, {
      session: admin,
      json: { type: 'User', name: 'dog' },
    });
    expect(answer.status).toBe(400);
    expect(errorOf(answer).diagnoses[0]?.field).toBe('name');
  });

  test('GET takes simple query parameters: filter by target and page with offset and limit', async () => {
    const e = await engine();
    const admin = await adminSession(e);
    for (const name of ['u1', 'u2', 'u3'])
      await createUser(e, admin, { name, password: 'password-1', target: 'DOMAIN' });
    const page = await raw(e.url, 'GET', `${USERS}?target=DOMAIN&offset=1&limit=1`, {
      session: admin,
    });
    expect(page.status).toBe(200);
    expect(page.json.result).toMatchObject({ type: 'UserList', total: 3, offset: 1, limit: 1 });
    expect(page.json.result.items.map((u: { name: string }) => u.name)).toEqual(['u2']);
    const all = await raw(e.url, 'GET', USERS, { session: admin });
    expect(all.json.result.items.map((u: { name: string }) => u.name)).toEqual([
      'admin',
      'u1',
      'u2',
      'u3',
    ]);
    expect(all.json.result).toMatchObject({ total: 4, offset: 0, limit: 100 });
  });

  test('creating an existing name is a conflict (409); reading a missing user is object.missing (404)', async () => {
    const e = await engine();
    const admin = await adminSession(e);
    const dup = await raw(e.url, 'POST', USERS, {
      session: admin,
      json: { type: 'User', name: 'admin', password: 'password-1' },
    });
    expect(dup.status).toBe(409);
    expect(errorOf(dup).id).toBe('exception.executor.object.exists');
    for (const [method, path] of [
      ['GET', `${USERS}/ghost`],
      ['POST', `${USERS}/ghost`],
    ] as const) {
      const answer = await raw(e.url, method, path, {
        session: admin,
        ...(method === 'POST' ? { json: { type: 'User', fullName: 'x' } } : {}),
      });
      expect(answer.status).toBe(404);
      expect(errorOf(answer).id).toBe('exception.executor.object.missing');
    }
  });

  test('the last enabled administrator can be neither deleted, demoted nor disabled (409)', async () => {
    const e = await engine();
    const admin = await adminSession(e);
    const attempts = [
      raw(e.url, 'DELETE', `${USERS}/admin`, { session: admin }),
      raw(e.url, 'POST', `${USERS}/admin`, {
        session: admin,
        json: { type: 'User', role: 'USER' },
      }),
      raw(e.url, 'POST', `${USERS}/admin`, {
        session: admin,
        json: { type: 'User', enabled: false },
      }),
    ];
    for (const answer of await Promise.all(attempts)) {
      expect(answer.status).toBe(409);
      expect(errorOf(answer).id).toBe('exception.executor.object.conflict');
    }
  });

  test('writes need an administrator (403); any logged-in user may read', async () => {
    const e = await engine();
    const admin = await adminSession(e);
    await createUser(e, admin, { name: 'plain', password: 'password-1' });
    const user = await login(e, await openSession(e), 'plain', 'password-1');
    expect((await raw(e.url, 'GET', USERS, { session: user })).status).toBe(200);
    expect((await raw(e.url, 'GET', `${USERS}/admin`, { session: user })).status).toBe(200);
    const writes = [
      raw(e.url, 'POST', USERS, {
        session: user,
        json: { type: 'User', name: 'x', password: 'password-1' },
      }),
      raw(e.url, 'POST', `${USERS}/plain`, {
        session: user,
        json: { type: 'User', role: 'ADMINISTRATOR' },
      }),
      raw(e.url, 'DELETE', `${USERS}/admin`, { session: user }),
      raw(e.url, 'POST', `${USERS}/admin/delete`, { session: user }),
    ];
    for (const answer of await Promise.all(writes)) {
      expect(answer.status).toBe(403);
      expect(errorOf(answer).id).toBe('exception.webservices.permission.denied');
    }
  });
});

describe('DELETE on an object and POST <url>/delete do the same thing', () => {
  async function deleteBoth(
    setup: (e: Awaited<ReturnType<typeof engine>>, admin: string) => Promise<void>,
    name: string,
  ) {
    const answers = [];
    for (const [method, suffix] of [
      ['DELETE', ''],
      ['POST', '/delete'],
    ] as const) {
      const e = await engine();
      const admin = await adminSession(e);
      await setup(e, admin);
      const answer = await raw(e.url, method, `${USERS}/${name}${suffix}`, { session: admin });
      const after = await raw(e.url, 'GET', `${USERS}/${name}`, { session: admin });
      answers.push({
        status: answer.status,
        body: answer.json,
        after: after.status,
        type: answer.headers['content-type'],
      });
    }
    return answers;
  }

  test('on an existing object: same status, same body, object gone', async () => {
    const [viaDelete, viaPost] = await deleteBoth(
      (e, admin) => createUser(e, admin, { name: 'dee', password: 'password-1', fullName: 'Dee' }),
      'dee',
    );
    expect(viaDelete).toEqual(viaPost);
    expect(viaDelete?.status).toBe(200);
    expect(viaDelete?.body.result).toMatchObject({ type: 'User', name: 'dee', fullName: 'Dee' });
    expect(viaDelete?.after).toBe(404);
  });

  test('on a missing object: both 404 object.missing with the same body', async () => {
    const [viaDelete, viaPost] = await deleteBoth(async () => {}, 'nobody');
    expect(viaDelete).toEqual(viaPost);
    expect(viaDelete?.status).toBe(404);
    expect(viaDelete?.body.error.id).toBe('exception.executor.object.missing');
  });

  test('neither accepts a body, except an empty object', async () => {
    const e = await engine();
    const admin = await adminSession(e);
    await createUser(e, admin, { name: 'eve', password: 'password-1' });
    for (const [method, path] of [
      ['DELETE', `${USERS}/eve`],
      ['POST', `${USERS}/eve/delete`],
    ] as const) {
      const answer = await raw(e.url, method, path, {
        session: admin,
        json: { type: 'User', name: 'eve' },
      });
      expect(answer.status).toBe(400);
      expect(errorOf(answer).id).toBe('exception.webservices.request.invalid');
    }
    const empty = await raw(e.url, 'POST', `${USERS}/eve/delete`, { session: admin, json: {} });
    expect(empty.status).toBe(200);
  });
});

describe('every result is JSON; unknown calls', () => {
  test('unknown paths answer endpoint.missing (404); known paths with another method 405 with Allow', async () => {
    const e = await engine();
    const admin = await adminSession(e);
    const missing = await raw(e.url, 'GET', '/resources/json/nothing', { session: admin });
    expect(missing.status).toBe(404);
    expect(missing.headers['content-type']).toMatch(/^application\/json/);
    expect(errorOf(missing).id).toBe('exception.webservices.endpoint.missing');
    const wrong = await raw(e.url, 'PUT', `${USERS}/admin`, {
      session: admin,
      json: { type: 'User' },
    });
    expect(wrong.status).toBe(405);
    expect(wrong.headers.allow).toBe('GET, HEAD, POST, DELETE');
    expect(errorOf(wrong).id).toBe('exception.webservices.method.not.allowed');
  });

  test('answers carry Cache-Control: no-store and nosniff', async () => {
    const e = await engine();
    const answer = await raw(e.url, 'GET', USERS, { session: await adminSession(e) });
    expect(answer.headers['cache-control']).toBe('no-store');
    expect(answer.headers['x-content-type-options']).toBe('nosniff');
  });
});

describe('whoami shows the gateway identity', () => {
  test('X-Client-* headers come back decoded; without them gateway is null', async () => {
    const e = await engine();
    const session = await adminSession(e);
    const behind = await raw(e.url, 'GET', '/resources/json/service/whoami', {
      session,
      headers: {
        // Both percent-encoded by the gateway (a bearer subject may hold any character).
        'X-Client-Id': 'user%40idp',
        'X-Client-Name': 'Z%C3%BCrich%20ops',
        'X-Client-Is-Admin': 'true',
      },
    });
    expect(behind.json.result).toEqual({
      type: 'Identity',
      user: expect.objectContaining({ type: 'User', name: 'admin' }),
      gateway: {
        type: 'GatewayIdentity',
        clientId: 'user@idp',
        clientName: 'Zürich ops',
        isAdmin: true,
      },
    });
    const direct = await raw(e.url, 'GET', '/resources/json/service/whoami', { session });
    expect(direct.json.result.gateway).toBeNull();
  });
});
