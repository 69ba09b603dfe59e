import { afterEach, describe, expect, test } from 'vitest';
import {
  EngineClient,
  type EngineClientOptions,
  EngineConflictError,
  EngineHttpError,
  EngineLoginError,
  EngineNotFoundError,
  EnginePermissionError,
  EngineRequestError,
  EngineSessionError,
  EngineUnauthenticatedError,
  EngineVersionError,
} from '../../../engine/client/index.js';
import { ADMIN_PASSWORD, engine, manualClock } from './support/engine.js';
import { fakeGateway } from './support/fake-gateway.js';

const clients: EngineClient[] = [];
afterEach(() => {
  for (const c of clients.splice(0)) c.close();
});

function client(options: EngineClientOptions): EngineClient {
  const c = new EngineClient(options);
  clients.push(c);
  return c;
}

const v = (major: number, minor: number, micro = 0) => ({ major, minor, micro });

describe('version negotiation: each major the client speaks, newest first', () => {
  test('same versions on both sides: the newest major, as is', async () => {
    const e = await engine();
    const negotiated = await client({ baseUrl: e.url }).open();
    expect(negotiated).toEqual({
      requested: v(2, 1),
      native: v(2, 1),
      effective: v(2, 1),
      locale: 'en_US',
    });
  });

  test('a newer engine (majors 3 and 2, minor 2.4): the client stays on 2.1 and the engine translates', async () => {
    const e = await engine({ versions: [v(3, 0), v(2, 4, 1)] });
    const c = client({ baseUrl: e.url });
    expect(await c.open()).toMatchObject({
      requested: v(2, 1),
      native: v(2, 4, 1),
      effective: v(2, 1),
    });
    await c.login('admin', ADMIN_PASSWORD);
    expect(Object.keys(await c.users.get('admin'))).toContain('enabled');
  });

  test('an older engine (major 1 only, at 1.1): the client falls back to major 1 at 1.1', async () => {
    const e = await engine({ versions: [v(1, 1)] });
    const c = client({ baseUrl: e.url });
    expect(await c.open()).toMatchObject({
      requested: v(1, 2),
      native: v(1, 1),
      effective: v(1, 1),
    });
    const { user } = await c.login('admin', ADMIN_PASSWORD);
    expect(user).toEqual({
      type: 'User',
      name: 'admin',
      target: 'SYSTEM',
      fullName: '',
      admin: true,
      email: '',
    });
  });

  test('a client that also speaks a major the engine lacks skips it', async () => {
    const e = await engine();
    const negotiated = await client({
      baseUrl: e.url,
      versions: [v(1, 0), v(4, 0), v(3, 2)],
    }).open();
    expect(negotiated.native).toEqual(v(1, 2));
    expect(negotiated.effective).toEqual(v(1, 0));
  });

  test.each([
    ['a newer engine', [v(3, 0)], undefined],
    ['an older engine', [v(1, 0)], [v(3, 1), v(2, 0)]],
  ])(
    'disjoint majors (%s): a clear EngineVersionError',
    async (_, engineVersions, clientVersions) => {
      const e = await engine({ versions: engineVersions });
      const attempt = client({ baseUrl: e.url, versions: clientVersions }).open();
      await expect(attempt).rejects.toBeInstanceOf(EngineVersionError);
      const message = (await attempt.catch((err: Error) => err.message)) as string;
      expect(message).toMatch(/No API major version in common: this client speaks \d, \d/);
      expect(message).toContain(`supported major versions: ${engineVersions[0]!.major}`);
    },
  );
});

describe('login, cookies and typed errors', () => {
  test('connect logs in; later calls carry the rotated cookie; logout ends the session', async () => {
    const e = await engine();
    const c = client({ baseUrl: e.url });
    const { user } = await c.connect('admin', ADMIN_PASSWORD);
    expect(user.role).toBe('ADMINISTRATOR');
    expect((await c.current()).version).toEqual({ type: 'APIVersion', ...v(2, 1) });
    await c.users.create({ name: 'carol', password: 'password-1', fullName: 'Carol' });
    expect((await c.users.update('carol', { email: 'c@example.org' })).email).toBe('c@example.org');
    expect((await c.users.list()).items.map((u) => u.name)).toEqual(['admin', 'carol']);
    expect((await c.users.delete('carol', { viaPost: true })).name).toBe('carol');
    await c.logout();
    await expect(c.users.list()).rejects.toMatchObject({
      id: 'exception.webservices.session.missing',
    });
  });

  test('each ErrorResult becomes a typed error with id, status, details and diagnoses', async () => {
    const clock = manualClock();
    const e = await engine({ now: clock.now, sessionIdleSeconds: 10 });
    const c = client({ baseUrl: e.url });
    await c.open();
    await expect(c.users.list()).rejects.toBeInstanceOf(EngineUnauthenticatedError);
    const failed = await c.login('admin', 'wrong').catch((err: unknown) => err);
    expect(failed).toBeInstanceOf(EngineLoginError);
    expect(failed).toMatchObject({ status: 401, id: 'exception.webservices.login.failed' });
    await c.login('admin', ADMIN_PASSWORD);
    await expect(c.users.get('ghost')).rejects.toBeInstanceOf(EngineNotFoundError);
    await expect(c.users.create({ name: 'admin', password: 'password-1' })).rejects.toBeInstanceOf(
      EngineConflictError,
    );
    const invalid = await c.users
      .create({ name: 'bad name', password: 'x' })
      .catch((err: unknown) => err);
    expect(invalid).toBeInstanceOf(EngineRequestError);
    expect((invalid as EngineRequestError).diagnoses.map((d) => d.field)).toEqual([
      'name',
      'password',
    ]);

    await c.users.create({ name: 'plain', password: 'password-1' });
    const plain = client({ baseUrl: e.url });
    await plain.connect('plain', 'password-1');
    await expect(plain.users.delete('admin')).rejects.toBeInstanceOf(EnginePermissionError);

    clock.advance(10_000);
    const expired = await c.users.list().catch((err: unknown) => err);
    expect(expired).toBeInstanceOf(EngineSessionError);
    expect(expired).toMatchObject({ status: 401, id: 'exception.webservices.session.invalid' });
  });
});

describe('through an HTTPS gateway with a self-signed certificate', () => {
  const gateways: { close(): Promise<void> }[] = [];
  afterEach(async () => {
    await Promise.all(gateways.splice(0).map((g) => g.close()));
  });

  async function setup() {
    const e = await engine();
    const gateway = await fakeGateway(e.url, 'apk 1.secret');
    gateways.push(gateway);
    return gateway;
  }

  test('a path-less origin, the CA and an Authorization header: open, log in, manage an object', async () => {
    const gateway = await setup();
    const c = client({
      baseUrl: gateway.url,
      tls: { ca: gateway.ca },
      authorization: 'apk 1.secret',
    });
    await c.connect('admin', ADMIN_PASSWORD);
    expect((await c.whoami()).gateway).toEqual({
      type: 'GatewayIdentity',
      clientId: '7',
      clientName: 'Zürich client',
      isAdmin: false,
    });
    await c.users.create({ name: 'via-gateway', password: 'password-1' });
    await c.users.delete('via-gateway');
    await expect(c.users.get('via-gateway')).rejects.toBeInstanceOf(EngineNotFoundError);

    expect(gateway.seen.every((r) => r.authorization === 'apk 1.secret')).toBe(true);
    const [open, login, whoami] = gateway.seen;
    expect(open?.cookie).toBeUndefined();
    expect(login?.cookie).toMatch(/^engine_session=/);
    // The cookie changed at login, and the client used the new one from then on.
    expect(whoami?.cookie).toMatch(/^engine_session=/);
    expect(whoami?.cookie).not.toBe(login?.cookie);
  });

  test('a base URL with a path prefix works too', async () => {
    const gateway = await setup();
    const c = client({
      baseUrl: `${gateway.url}/prefix/`,
      tls: { ca: gateway.ca },
      authorization: 'apk 1.secret',
    });
    await c.connect('admin', ADMIN_PASSWORD);
    expect(gateway.seen.map((r) => r.path)).toEqual([
      '/resources/json/service/session',
      '/resources/json/service/login',
    ]);
  });

  test('a refusal by the gateway itself is an EngineHttpError with its status and body', async () => {
    const gateway = await setup();
    const c = client({
      baseUrl: gateway.url,
      tls: { ca: gateway.ca },
      authorization: 'apk 1.wrong',
    });
    const refused = await c.open().catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(EngineHttpError);
    expect(refused).toMatchObject({ status: 401, body: '{"error":"invalid_api_key"}' });
  });

  test('without the CA the certificate is rejected', async () => {
    const gateway = await setup();
    const c = client({ baseUrl: gateway.url, authorization: 'apk 1.secret' });
    await expect(c.open()).rejects.toThrow(/self-signed certificate/);
    expect(gateway.seen).toEqual([]);
  });
});
