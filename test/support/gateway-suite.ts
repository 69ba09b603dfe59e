import { X509Certificate } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { EngineClient } from '../../engine/client/index.js';
import type { HttpOptions } from './http.js';
import { lastLines } from './log-lines.js';
import { CLIENTS, uniqueName } from './management.js';
import { opensslCertificate } from './openssl.js';
import { expectRevokedWithinBound } from './revocation.js';
import { apk } from './sidecar.js';
import type { Stack } from './stack.js';
import { callStack } from './stack-http.js';
import { handshake } from './tls.js';

const WHOAMI = '/resources/json/service/whoami';
const OPENAPI = '/v1/management/openapi.json';
const SETTINGS = '/v1/management/settings';

/**
 * The black-box suite every way of running the gateway must pass (native processes,
 * containers). It only uses what an operator or caller has: HTTPS, logs, the config directory.
 */
export function gatewaySuite(start: () => Promise<Stack>): void {
  let stack: Stack;
  let scratch: string;

  beforeAll(async () => {
    stack = await start();
    scratch = await mkdtemp(join(tmpdir(), 'gw-e2e-scratch-'));
  }, 240_000);
  afterAll(async () => {
    await stack?.close();
    if (scratch) await rm(scratch, { recursive: true, force: true });
  }, 120_000);

  const port = () => Number(new URL(stack.baseUrl).port);
  const call = (path: string, options: HttpOptions = {}) => callStack(stack, path, options);
  const create = async (body: Record<string, unknown>, key = stack.adminKey) => {
    const res = await call(CLIENTS, { method: 'POST', headers: apk(key), json: body });
    expect(res.status, res.text).toBe(201);
    return res.json as { api_key_id: number; token: string };
  };
  const engineClient = async (key: string, headers: Record<string, string> = {}) =>
    new EngineClient({
      baseUrl: `https://127.0.0.1:${port()}`,
      authorization: `apk ${key}`,
      headers,
      tls: await stack.tls(),
    });

  describe('authentication at the door', () => {
    test('no credential: 401 with the JSON error and WWW-Authenticate, never the app', async () => {
      // The gateway's reserved paths too: where nothing lives is said only after authentication.
      for (const path of [
        '/',
        '/api',
        WHOAMI,
        CLIENTS,
        '/v1/management',
        '/_auth',
        '/_gateway/errors/404',
      ]) {
        const res = await call(path);
        expect(res.status, path).toBe(401);
        expect(res.headers['www-authenticate']).toBe('apk');
        expect(res.json).toEqual({
          errors: [expect.objectContaining({ code: 'MISSING_CREDENTIALS' })],
        });
      }
    });

    test('a malformed or unknown key: 401', async () => {
      expect((await call('/api', { headers: apk('nope') })).status).toBe(401);
      expect((await call('/api', { headers: apk(`424242.${'A'.repeat(43)}`) })).status).toBe(401);
    });

    test('the bootstrap admin key manages clients: create, list, get, delete', async () => {
      const name = uniqueName('e2e');
      const { api_key_id: id, token } = await create({
        name,
        is_admin: false,
        generate_api_key: true,
      });
      expect(token.startsWith(`${id}.`)).toBe(true);
      const list = await call(CLIENTS, { headers: apk(stack.adminKey) });
      expect(list.status).toBe(200);
      expect((list.json as { items: { name: string }[] }).items.map((i) => i.name)).toContain(name);
      const one = await call(`${CLIENTS}/${id}`, { headers: apk(stack.adminKey) });
      expect(one.json).toMatchObject({ api_key_id: id, name, is_admin: false });
      const gone = await call(`${CLIENTS}/${id}`, {
        method: 'DELETE',
        headers: apk(stack.adminKey),
      });
      expect(gone.status).toBe(200);
    });

    test('a non-admin key: 403 on management, 200 on the app', async () => {
      const { token } = await create({
        name: uniqueName('user'),
        is_admin: false,
        generate_api_key: true,
      });
      const management = await call(CLIENTS, { headers: apk(token) });
      expect(management.status).toBe(403);
      expect(management.json).toEqual({ errors: [expect.objectContaining({ code: 'FORBIDDEN' })] });
      const sneaky = await call('/v1//management/api-clients', { headers: apk(token) });
      expect(sneaky.status).toBe(403);
      const app = await call('/api', { headers: apk(token) });
      expect(app.status).toBe(200);
      expect(app.text).toContain('/resources/json/service/session');
    });

    test('the OpenAPI document: an admin gets it through the gateway, nobody else does', async () => {
      const doc = await call(OPENAPI, { headers: apk(stack.adminKey) });
      expect(doc.status).toBe(200);
      expect(doc.json).toMatchObject({
        openapi: '3.1.0',
        paths: { [CLIENTS]: expect.any(Object) },
      });
      expect((await call(OPENAPI)).status).toBe(401);
      const { token } = await create({
        name: uniqueName('reader'),
        is_admin: false,
        generate_api_key: true,
      });
      expect((await call(OPENAPI, { headers: apk(token) })).status).toBe(403);
    });

    test('a deleted key is refused within the revocation bound, caches warm', async () => {
      const { api_key_id: id, token } = await create({
        name: uniqueName('gone'),
        is_admin: false,
        generate_api_key: true,
      });
      for (let i = 0; i < 5; i += 1)
        expect((await call('/api', { headers: apk(token) })).status).toBe(200);
      const deleted = await call(`${CLIENTS}/${id}`, {
        method: 'DELETE',
        headers: apk(stack.adminKey),
      });
      expect(deleted.status).toBe(200);
      let firstRefusal: unknown;
      await expectRevokedWithinBound(
        async () => {
          const res = await call('/api', { headers: apk(token) });
          if (res.status === 401) firstRefusal ??= res.json;
          return res.status;
        },
        Date.now(),
        stack.revocationBoundMs,
      );
      expect(firstRefusal).toEqual({
        errors: [expect.objectContaining({ code: 'INVALID_API_KEY' })],
      });
    });

    test('a key demoted by PUT loses the management API within the revocation bound, caches warm', async () => {
      const { api_key_id: id, token } = await create({
        name: uniqueName('demoted'),
        is_admin: true,
        generate_api_key: true,
      });
      for (let i = 0; i < 5; i += 1)
        expect((await call(CLIENTS, { headers: apk(token) })).status).toBe(200);
      const demoted = await call(`${CLIENTS}/${id}`, {
        method: 'PUT',
        headers: apk(stack.adminKey),
        json: { is_admin: false },
      });
      expect(demoted.status, demoted.text).toBe(200);
      expect(demoted.json).toMatchObject({ id, is_admin: false });
      await expectRevokedWithinBound(
        async () => (await call(CLIENTS, { headers: apk(token) })).status,
        Date.now(),
        stack.revocationBoundMs,
        403,
      );
      // Outside the management API the key still works, now as a non-admin.
      const who = await call('/api', { headers: apk(token) });
      expect(who.status).toBe(200);
    });

    test('a client with a 1024-character name and api_client_id passes with its identity', async () => {
      const { token } = await create({
        name: `${uniqueName('long')}-${'n'.repeat(1024)}`.slice(0, 1024),
        is_admin: false,
        generate_api_key: true,
        api_client_id: 's'.repeat(1024),
      });
      const res = await call('/api', { headers: apk(token) });
      expect(res.status, res.text).toBe(200);
    });

    test('an unknown key is never served from the cache, even beside a cached valid one', async () => {
      const { api_key_id: id, token } = await create({
        name: uniqueName('warm'),
        is_admin: false,
        generate_api_key: true,
      });
      for (let i = 0; i < 5; i += 1)
        expect((await call('/api', { headers: apk(token) })).status).toBe(200);
      const sameIdWrongSecret = `${id}.${'B'.repeat(43)}`;
      for (let i = 0; i < 5; i += 1) {
        expect((await call('/api', { headers: apk(sameIdWrongSecret) })).status).toBe(401);
        expect(
          (await call('/api', { headers: apk(`${id + 1000}.${'C'.repeat(43)}`) })).status,
        ).toBe(401);
      }
    });
  });

  describe('the application behind the gateway', () => {
    test('the identity reaches the app, and a caller-sent identity header never does', async () => {
      const name = `Zoë ${uniqueName('who')}`;
      const { api_key_id: id, token } = await create({
        name,
        is_admin: false,
        generate_api_key: true,
      });
      const client = await engineClient(token, {
        'X-Client-Id': '1',
        'X-Client-Name': 'forged',
        'X-Client-Is-Admin': 'true',
      });
      await client.connect('admin', 'engine-admin-password');
      const who = await client.whoami();
      expect(who.gateway).toEqual({
        type: 'GatewayIdentity',
        clientId: String(id),
        clientName: name,
        isAdmin: false,
      });
      client.close();
    });

    test('a name of 1024 four-byte characters reaches the app whole (12 KB percent-encoded)', async () => {
      const name = `${uniqueName('long')}-${'🚀'.repeat(1024)}`.slice(0, 1024 * 2);
      const chars = [...name].slice(0, 1024).join('');
      const { api_key_id: id, token } = await create({
        name: chars,
        is_admin: false,
        generate_api_key: true,
      });
      const client = await engineClient(token);
      await client.connect('admin', 'engine-admin-password');
      // Twice: the first asks the sidecar, the second is answered from nginx's shared memory.
      for (let i = 0; i < 2; i += 1) {
        expect((await client.whoami()).gateway).toEqual({
          type: 'GatewayIdentity',
          clientId: String(id),
          clientName: chars,
          isAdmin: false,
        });
      }
      client.close();
    });

    test('the engine client opens a session, logs in and manages an object through the gateway', async () => {
      const { token } = await create({
        name: uniqueName('engine'),
        is_admin: false,
        generate_api_key: true,
      });
      const client = await engineClient(token);
      const session = await client.open();
      expect(session.native.major).toBeGreaterThanOrEqual(1);
      await client.login('admin', 'engine-admin-password');
      const user = uniqueName('u');
      await client.users.create({
        name: user,
        password: 'a long enough password',
        fullName: 'E2E',
      });
      expect((await client.users.get(user)).name).toBe(user);
      await client.users.delete(user, { viaPost: true });
      await expect(client.users.get(user)).rejects.toThrow();
      client.close();
    });

    test('an engine session cookie without an API key does not get past the gateway', async () => {
      const { token } = await create({
        name: uniqueName('cookie'),
        is_admin: false,
        generate_api_key: true,
      });
      const opened = await call('/resources/json/service/session', {
        method: 'POST',
        headers: apk(token),
        json: { type: 'APISession', version: { type: 'APIVersion', major: 2, minor: 1, micro: 0 } },
      });
      expect(opened.status).toBe(200);
      const cookie = String(opened.headers['set-cookie']).split(';')[0]!;
      expect(String(opened.headers['set-cookie'])).toMatch(/HttpOnly/i);
      expect(String(opened.headers['set-cookie'])).toMatch(/Secure/i);
      const res = await call('/resources/json/service/session', { headers: { Cookie: cookie } });
      expect(res.status).toBe(401);
    });
  });

  describe('TLS', () => {
    test('TLS 1.0 and 1.1 are refused; 1.2 and 1.3 are accepted', async () => {
      const { ca, servername } = await stack.tls();
      for (const v of ['TLSv1', 'TLSv1.1'] as const) {
        expect((await handshake(port(), v, ca, servername)).ok, v).toBe(false);
      }
      for (const v of ['TLSv1.2', 'TLSv1.3'] as const) {
        const h = await handshake(port(), v, ca, servername);
        expect(h.ok && h.protocol, v).toBe(v);
      }
    });

    test("the served certificate's CN and SAN are the FQDN", async () => {
      const { ca, servername } = await stack.tls();
      const h = await handshake(port(), 'TLSv1.3', ca, servername);
      if (!h.ok) throw new Error(h.error);
      expect(h.certificate.subject.CN).toBe(stack.fqdn);
      expect(h.certificate.subjectaltname).toContain(`DNS:${stack.fqdn}`);
    });
  });

  describe('operator procedures (spec 5.2, 5.4) and restarts', () => {
    test('a restart keeps API clients and ends every engine session', async () => {
      const { token } = await create({
        name: uniqueName('keep'),
        is_admin: false,
        generate_api_key: true,
      });
      const client = await engineClient(token);
      await client.connect('admin', 'engine-admin-password');
      await stack.restart();
      expect((await call('/api', { headers: apk(token) })).status).toBe(200);
      await expect(client.whoami()).rejects.toMatchObject({ id: expect.stringMatching(/session/) });
      client.close();
    });

    test('spec 5.2: bootstrap key procedure, exactly as written', async () => {
      await stack.restart({ API_KEY_CREATE: 'true' });
      const lines = (await stack.logs('gateway')).match(/NEWLY GENERATED API KEY: \S+/g) ?? [];
      const bootstrapKey = lines[lines.length - 1]!.split(' ').pop()!;
      const before = lines.length;
      const admin = await create(
        { name: uniqueName('ops-admin'), is_admin: true, generate_api_key: true },
        bootstrapKey,
      );
      const bootstrapId = bootstrapKey.split('.')[0];
      const del = await call(`${CLIENTS}/${bootstrapId}`, {
        method: 'DELETE',
        headers: apk(admin.token),
      });
      expect(del.status).toBe(200);
      await stack.restart({ API_KEY_CREATE: 'false' });
      expect((await call(CLIENTS, { headers: apk(bootstrapKey) })).status).toBe(401);
      expect((await call(CLIENTS, { headers: apk(admin.token) })).status).toBe(200);
      const after = (await stack.logs('gateway')).match(/NEWLY GENERATED API KEY: \S+/g) ?? [];
      expect(after.length).toBe(before);
    }, 120_000);

    test('the bootstrap lock: locked, a restart with API_KEY_CREATE=true mints nothing and logs why; unlocked, it mints', async () => {
      // Distinct keys: the native runner's log may show a key line more than once.
      const keyLines = async () => [
        ...new Set((await stack.logs('gateway')).match(/NEWLY GENERATED API KEY: \S+/g) ?? []),
      ];
      const lock = async (locked: boolean) => {
        const res = await call(SETTINGS, {
          method: 'PUT',
          headers: apk(stack.adminKey),
          json: { bootstrap_locked: locked },
        });
        expect(res.status, res.text).toBe(200);
        expect(res.json).toEqual({ bootstrap_locked: locked });
      };
      await lock(true);
      const before = (await keyLines()).length;
      // Each refusal: the log's warning, and a line where the key line would be (issue 42:
      // the terminal natively, the container's log).
      const refusals = () =>
        stack.logs('gateway').then((log) => ({
          warnings: log.match(/"reason":"bootstrap_locked"/g)?.length ?? 0,
          lines: log.match(/^NO API KEY GENERATED: .*bootstrap lock is on/gm)?.length ?? 0,
        }));
      const refusedBefore = await refusals();
      await stack.restart({ API_KEY_CREATE: 'true' });
      expect((await keyLines()).length).toBe(before);
      const refused = await refusals();
      expect(refused.warnings).toBe(refusedBefore.warnings + 1);
      // Natively the line is in the sidecar's log and in the runner's output: counted twice.
      expect(refused.lines).toBeGreaterThan(refusedBefore.lines);
      // The lock survived the restart; an admin key unlocks it, and the next start mints again.
      const read = await call(SETTINGS, { headers: apk(stack.adminKey) });
      expect(read.json).toEqual({ bootstrap_locked: true });
      await lock(false);
      await stack.restart({ API_KEY_CREATE: 'true' });
      const after = await keyLines();
      expect(after.length).toBe(before + 1);
      const minted = after[after.length - 1]!.split(' ').pop()!;
      const withMinted = await call(SETTINGS, { headers: apk(minted) });
      // On a failure, the answer and the end of the gateway's log say which part refused.
      const why =
        withMinted.status === 200
          ? ''
          : `gateway:\n${lastLines(await stack.logs('gateway'))}\nnginx:\n${lastLines(await stack.logs('proxy'))}`;
      expect(withMinted.status, `${withMinted.text}\n${why}`).toBe(200);
    }, 120_000);

    test('spec 5.4: a supplied certificate, key and ssl.conf are served after a restart', async () => {
      const supplied = await opensslCertificate(scratch, 'supplied', [
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:P-256',
        '-days',
        '30',
        '-subj',
        `/CN=${stack.fqdn}`,
        '-addext',
        `subjectAltName=DNS:${stack.fqdn}`,
      ]);
      const sslConf = join(stack.configDir, 'nginx/ssl/ssl.conf');
      const original = await readFile(sslConf, 'utf8');
      await writeFile(join(stack.configDir, 'nginx/ssl/nginx.crt'), supplied.certificatePem);
      await writeFile(join(stack.configDir, 'nginx/ssl/nginx.key'), supplied.keyPem, {
        mode: 0o600,
      });
      await writeFile(
        sslConf,
        original.replace(/^ssl_protocols [^;]*;/m, 'ssl_protocols TLSv1.3;'),
      );
      await stack.restart();
      const { ca, servername } = await stack.tls();
      const h = await handshake(port(), 'TLSv1.3', ca, servername);
      if (!h.ok) throw new Error(h.error);
      const served = new X509Certificate(h.certificate.raw);
      expect(served.fingerprint256).toBe(
        new X509Certificate(supplied.certificatePem).fingerprint256,
      );
      expect((await handshake(port(), 'TLSv1.2', ca, servername)).ok).toBe(false);
      expect((await call('/api', { headers: apk(stack.adminKey) })).status).toBe(200);
    }, 120_000);
  });

  describe('fail closed', () => {
    test('with the sidecar stopped: nginx decides what its key table holds, anything else is 5xx JSON and never the app', async () => {
      const { token: held } = await create({
        name: uniqueName('held'),
        is_admin: false,
        generate_api_key: true,
      });
      await stack.stopService('gateway');
      const expectFailedClosed = async (path: string, key: string) => {
        const res = await call(path, { headers: apk(key) });
        expect(res.status, path).toBeGreaterThanOrEqual(500);
        expect(res.status).toBeLessThan(600);
        expect(res.text).not.toContain('/resources/json/service/session');
        expect(res.json).toEqual({
          errors: [expect.objectContaining({ code: expect.any(String) })],
        });
      };
      // Management is the sidecar's to decide, every time.
      await expectFailedClosed(CLIENTS, stack.adminKey);
      // A key in nginx's key table is nginx's to decide without its sidecar, for
      // key_table.trust_s (docs/decisions/20261127-key-table-replica.md).
      expect((await call('/api', { headers: apk(held) })).status).toBe(200);
      // An id nginx does not hold is nobody's only while the sidecar says the feed is live (5 s);
      // after that it can only be asked about, and nobody answers.
      const unknown = `${990_000_000 + Math.floor(Math.random() * 1_000_000)}.${'x'.repeat(43)}`;
      const deadline = Date.now() + 15_000;
      while ((await call('/api', { headers: apk(unknown) })).status === 401) {
        if (Date.now() > deadline)
          throw new Error('an unknown id was still refused as nobody after 15 s');
        await new Promise((r) => setTimeout(r, 200));
      }
      for (const path of ['/api', WHOAMI]) await expectFailedClosed(path, unknown);
      await expectFailedClosed(CLIENTS, stack.adminKey);
    }, 60_000);
  });
}
