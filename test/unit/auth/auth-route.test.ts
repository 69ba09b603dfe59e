import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { ApiKeyVerifier } from '../../../sidecar/auth/api-key-verifier.js';
import { createAuthHandler } from '../../../sidecar/auth/auth-route.js';
import { Authenticator } from '../../../sidecar/auth/authenticator.js';
import { http } from '../../support/http.js';
import { directoryOf, row } from '../support/clients.js';
import { recordingLogger, serve } from '../support/serve.js';

const SECRET = 'u'.repeat(43);
const ADMIN = 'a'.repeat(43);
const clients = directoryOf([
  row(1, { secret: SECRET, name: 'Zoë / ops' }),
  row(2, { secret: ADMIN, isAdmin: true, name: 'root' }),
]);
const failing = {
  byId: async (): Promise<never> => {
    throw new Error('connection refused');
  },
};

const { log, lines } = recordingLogger();
let ok: Awaited<ReturnType<typeof serve>>;
let down: Awaited<ReturnType<typeof serve>>;
beforeAll(async () => {
  ok = await serve(createAuthHandler(new Authenticator(new ApiKeyVerifier(clients), null), log));
  down = await serve(createAuthHandler(new Authenticator(new ApiKeyVerifier(failing), null), log));
});
afterAll(async () => {
  await ok.close();
  await down.close();
});

const ask = (url: string, headers: Record<string, string>) => http(`${url}/auth`, { headers });

describe('/auth', () => {
  test('a valid key: 204 with the identity, percent-encoded, never cached', async () => {
    const res = await ask(ok.url, { Authorization: `apk 1.${SECRET}` });
    expect(res.status).toBe(204);
    expect(res.headers).toMatchObject({
      'x-client-id': '1',
      'x-client-name': 'Zo%C3%AB%20%2F%20ops',
      'x-client-is-admin': 'false',
      'x-auth-method': 'apk',
      'cache-control': 'no-store',
    });
    expect(res.text).toBe('');
  });

  test('an admin key says so', async () => {
    const res = await ask(ok.url, { Authorization: `apk 2.${ADMIN}` });
    expect(res.status).toBe(204);
    expect(res.headers['x-client-is-admin']).toBe('true');
  });

  test('a refusal: 401 JSON, the same body in X-Auth-Error-Body, and a challenge', async () => {
    const res = await ask(ok.url, { Authorization: `apk 1.${ADMIN}` });
    expect(res.status).toBe(401);
    const body = { errors: [{ code: 'INVALID_API_KEY', message: 'The API key is not valid.' }] };
    expect(res.json).toEqual(body);
    expect(JSON.parse(String(res.headers['x-auth-error-body']))).toEqual(body);
    expect(res.headers).toMatchObject({
      'www-authenticate': 'apk',
      'content-type': 'application/json',
      'cache-control': 'no-store',
    });
    expect(res.headers['x-client-id']).toBeUndefined();
  });

  describe('on a management path', () => {
    const management = { 'X-Original-URI': '/v1//management/api-clients' };

    test('a valid non-admin key: 403 JSON, body also in X-Auth-Error-Body', async () => {
      const res = await ask(ok.url, { Authorization: `apk 1.${SECRET}`, ...management });
      expect(res.status).toBe(403);
      const body = {
        errors: [{ code: 'FORBIDDEN', message: 'The management API needs an admin credential.' }],
      };
      expect(res.json).toEqual(body);
      expect(JSON.parse(String(res.headers['x-auth-error-body']))).toEqual(body);
      expect(res.headers['cache-control']).toBe('no-store');
      expect(res.headers['x-client-id']).toBeUndefined();
    });

    test('nginx asking for an admin is enough', async () => {
      const res = await ask(ok.url, {
        Authorization: `apk 1.${SECRET}`,
        'X-Gateway-Require-Admin': 'true',
      });
      expect(res.status).toBe(403);
    });

    test('an admin key passes', async () => {
      const res = await ask(ok.url, { Authorization: `apk 2.${ADMIN}`, ...management });
      expect(res.status).toBe(204);
    });

    test('a bad key there is still 401, not 403', async () => {
      const res = await ask(ok.url, { Authorization: `apk 2.${SECRET}`, ...management });
      expect(res.status).toBe(401);
    });
  });

  test('a database fault fails closed: 503 JSON, logged', async () => {
    lines.length = 0;
    const res = await ask(down.url, { Authorization: `apk 1.${SECRET}` });
    expect(res.status).toBe(503);
    expect(res.json).toEqual({
      errors: [
        {
          code: 'SERVICE_UNAVAILABLE',
          message: 'The gateway cannot reach its database; retry later.',
        },
      ],
    });
    expect(res.headers['x-client-id']).toBeUndefined();
    expect(lines).toEqual([
      {
        level: 'error',
        message: 'authentication failed on an infrastructure fault',
        fields: { error: 'connection refused' },
      },
    ]);
  });

  test('a toggle nginx should never send: 500 INTERNAL for everyone, logged', async () => {
    lines.length = 0;
    const res = await ask(ok.url, {
      Authorization: `apk 2.${ADMIN}`,
      'X-Gateway-Api-Keys-Enabled': 'yes',
    });
    expect(res.status).toBe(500);
    expect(res.json).toEqual({ errors: [{ code: 'INTERNAL', message: 'Internal error.' }] });
    expect(res.headers['content-type']).toBe('application/json');
    expect(lines).toEqual([
      {
        level: 'error',
        message: 'nginx forwarded an invalid toggle; refusing every request',
        fields: {
          error: 'x-gateway-api-keys-enabled must be "true" or "false", got "yes"',
        },
      },
    ]);
  });
});
