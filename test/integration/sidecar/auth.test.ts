import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { freshDatabase } from '../../support/database.js';
import { http } from '../../support/http.js';
import { CLIENTS, createClient } from '../../support/management.js';
import { apk, startTestSidecar, type TestSidecar } from '../../support/sidecar.js';

let sidecar: TestSidecar;
let user: { id: number; token: string };

beforeAll(async () => {
  sidecar = await startTestSidecar(await freshDatabase());
  user = await createClient(sidecar.url, sidecar.adminKey, {
    name: 'Zoë 🚀 user',
    is_admin: false,
    generate_api_key: true,
  });
});
afterAll(() => sidecar?.close());

const auth = (headers: Record<string, string> | string[]) =>
  http(`${sidecar.url}/auth`, { headers });

describe('/auth with API keys', () => {
  test('a valid key answers 204 with the identity headers', async () => {
    const res = await auth(apk(user.token));
    expect(res.status).toBe(204);
    expect(res.headers['x-client-id']).toBe(String(user.id));
    expect(decodeURIComponent(String(res.headers['x-client-name']))).toBe('Zoë 🚀 user');
    expect(res.headers['x-client-is-admin']).toBe('false');
    expect(res.headers['x-auth-method']).toBe('apk');
    // The row nginx invalidates by; an API key's decision has no end of its own.
    expect(res.headers['x-gateway-client-row']).toBe(String(user.id));
    expect(res.headers['x-gateway-valid-until']).toBeUndefined();
  });

  test('the admin flag is passed for an admin key', async () => {
    const res = await auth(apk(sidecar.adminKey));
    expect(res.status).toBe(204);
    expect(res.headers['x-client-is-admin']).toBe('true');
  });

  test.each(['apk', 'APK', 'Apk', 'aPk'])(
    'the scheme %s is matched case-insensitively',
    async (scheme) => {
      const res = await auth({ Authorization: `${scheme} ${user.token}` });
      expect(res.status).toBe(204);
    },
  );

  const refused: [string, () => Record<string, string> | string[], string][] = [
    ['missing', () => ({}), 'MISSING_CREDENTIALS'],
    ['malformed', () => apk('abc'), 'MALFORMED_CREDENTIALS'],
    ['unknown', () => apk(`999999.${'x'.repeat(43)}`), 'INVALID_API_KEY'],
    ['wrong secret', () => apk(`${user.id}.${'x'.repeat(43)}`), 'INVALID_API_KEY'],
    [
      'two Authorization headers, even both valid',
      () => ['Authorization', `apk ${user.token}`, 'Authorization', `apk ${user.token}`],
      'MULTIPLE_CREDENTIALS',
    ],
    ['an unknown scheme', () => ({ Authorization: `Basic ${user.token}` }), 'UNSUPPORTED_SCHEME'],
  ];
  test.each(refused)('%s: 401, WWW-Authenticate: apk, JSON error', async (_what, headers, code) => {
    const res = await auth(headers());
    expect(res.status).toBe(401);
    expect(res.headers['www-authenticate']).toBe('apk');
    expect(res.headers['content-type']).toBe('application/json');
    expect(res.json).toEqual({ errors: [{ code, message: expect.any(String) }] });
    // Who the id belongs to goes to nginx with the key record (for a key of an existing
    // client only); nginx never relays it to the caller.
    expect(res.headers['x-client-id']).toBe(
      res.headers['x-gateway-key-record'] === 'known' ? String(user.id) : undefined,
    );
    expect(res.headers['x-gateway-key-record']).toBe(
      { 'wrong secret': 'known', unknown: 'unknown' }[_what],
    );
  });

  test('a deleted key is refused', async () => {
    const doomed = await createClient(sidecar.url, sidecar.adminKey, {
      name: 'to be deleted',
      is_admin: false,
      generate_api_key: true,
    });
    expect((await auth(apk(doomed.token))).status).toBe(204);
    await http(`${sidecar.url}${CLIENTS}/${doomed.id}`, {
      method: 'DELETE',
      headers: apk(sidecar.adminKey),
    });
    const res = await auth(apk(doomed.token));
    expect(res.status).toBe(401);
    expect(res.json).toEqual({ errors: [expect.objectContaining({ code: 'INVALID_API_KEY' })] });
  });

  test('a token-only client (no key) cannot be used with any apk secret', async () => {
    const tokenOnly = await createClient(sidecar.url, sidecar.adminKey, {
      name: 'token only',
      is_admin: true,
      generate_api_key: false,
      api_client_id: 'subject-1',
    });
    const res = await auth(apk(`${tokenOnly.id}.${'A'.repeat(43)}`));
    expect(res.status).toBe(401);
  });
});

describe('/auth obeys the toggles nginx forwards', () => {
  test('with API keys off, apk is refused even when valid', async () => {
    const res = await auth({
      ...apk(user.token),
      'X-Gateway-Api-Keys-Enabled': 'false',
      'X-Gateway-Oidc-Enabled': 'true',
    });
    expect(res.status).toBe(401);
    expect(res.json).toEqual({ errors: [expect.objectContaining({ code: 'METHOD_DISABLED' })] });
    expect(res.headers['www-authenticate']).toBe('Bearer');
  });

  test('with both methods off, nothing passes', async () => {
    const res = await auth({
      ...apk(sidecar.adminKey),
      'X-Gateway-Api-Keys-Enabled': 'false',
      'X-Gateway-Oidc-Enabled': 'false',
    });
    expect(res.status).toBe(401);
    expect(res.json).toEqual({ errors: [expect.objectContaining({ code: 'NO_METHOD_ENABLED' })] });
  });

  test('with OpenID Connect off, a bearer token is refused', async () => {
    const res = await auth({ Authorization: 'Bearer abc.def.ghi' });
    expect(res.status).toBe(401);
    expect(res.json).toEqual({ errors: [expect.objectContaining({ code: 'METHOD_DISABLED' })] });
  });

  test('a toggle with a value other than true/false fails closed (500), never 2xx', async () => {
    const res = await auth({ ...apk(user.token), 'X-Gateway-Api-Keys-Enabled': 'yes' });
    expect(res.status).toBe(500);
    expect(res.json).toEqual({ errors: [{ code: 'INTERNAL', message: 'Internal error.' }] });
  });
});

describe('/auth and the management paths', () => {
  test.each([
    '/v1/management/api-clients',
    '/v1/management/',
    '/v1//management/api-clients',
    '/v1/./management/api-clients',
    '/v1/%6danagement/api-clients',
    '/x/../v1/management/api-clients?limit=1',
  ])('a non-admin key asking for %s gets 403 with the JSON body', async (uri) => {
    const res = await auth({ ...apk(user.token), 'X-Original-URI': uri });
    expect(res.status).toBe(403);
    expect(res.json).toEqual({ errors: [expect.objectContaining({ code: 'FORBIDDEN' })] });
  });

  test('nginx can also require an admin explicitly', async () => {
    const res = await auth({
      ...apk(user.token),
      'X-Gateway-Require-Admin': 'true',
      'X-Original-URI': '/',
    });
    expect(res.status).toBe(403);
  });

  test('a non-admin key passes for the application', async () => {
    const res = await auth({ ...apk(user.token), 'X-Original-URI': '/v1/managementx/data' });
    expect(res.status).toBe(204);
  });

  test('an admin key passes for management paths', async () => {
    const res = await auth({
      ...apk(sidecar.adminKey),
      'X-Original-URI': '/v1/management/api-clients',
    });
    expect(res.status).toBe(204);
  });
});
