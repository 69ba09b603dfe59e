import pg from 'pg';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { freshDatabase } from '../../support/database.js';
import { http } from '../../support/http.js';
import { CLIENTS } from '../../support/management.js';
import { RESOURCE } from '../../support/oidc-provider.js';
import { type OidcSetup, startOidcSetup } from '../../support/oidc-setup.js';
import { nginxOidcHeaders } from '../../support/oidc-sidecar.js';
import {
  claimsOf,
  hs256WithPublicKey,
  signedByStranger,
  unsignedToken,
  withFlippedSignatureBit,
  withPayload,
} from '../../support/oidc-tokens.js';
import { apk } from '../../support/sidecar.js';

// Provider-issued tokens come from the real client_credentials grant; "hand-signed" ones are
// signed here with the provider's own private key, for what the provider will not issue.
let setup: OidcSetup;
let databaseUrl: string;
let alphaId: number;
let alphaToken: string;

beforeAll(async () => {
  databaseUrl = await freshDatabase();
  setup = await startOidcSetup(databaseUrl, [
    'svc-alpha',
    'svc-admin',
    'svc-orphan',
    'svc-doomed',
    'svc-doomed-sql',
    'svc-moved',
    'svc-expiring',
  ]);
  alphaId = await setup.addClient('svc-alpha', { name: 'Alpha service' });
  await setup.addClient('svc-admin', { isAdmin: true });
  alphaToken = await setup.provider.issueToken('svc-alpha');
});
afterAll(() => setup?.close());

const now = () => Math.floor(Date.now() / 1000);

function expectRefused(
  res: Awaited<ReturnType<OidcSetup['auth']>>,
  jwtError: string,
  code = 'INVALID_TOKEN',
) {
  expect(res.status, res.text).toBe(401);
  expect(res.headers['x-jwt-error']).toBe(jwtError);
  expect(res.headers['www-authenticate']).toBe('Bearer error="invalid_token"');
  expect(res.json).toEqual({ errors: [{ code, message: expect.any(String) }] });
  expect(res.headers['x-client-id']).toBeUndefined();
  expect(res.headers['x-client-is-admin']).toBeUndefined();
}

describe('a client that expires', () => {
  test('its tokens are kept no longer than its expiry, and refused from it with API_CLIENT_EXPIRED', async () => {
    const id = await setup.addClient('svc-expiring');
    const token = await setup.provider.issueToken('svc-expiring');
    const exp = claimsOf(token).exp as number;
    // An expiry before the token's exp: nginx must drop the decision at the expiry.
    const expiresAt = (now() + 5) * 1000 + 700;
    const put = await http(`${setup.sidecar.url}${CLIENTS}/${id}`, {
      method: 'PUT',
      headers: apk(setup.sidecar.adminKey),
      json: { expires_at: new Date(expiresAt).toISOString() },
    });
    expect(put.status, put.text).toBe(200);
    expect(exp * 1000).toBeGreaterThan(expiresAt);
    const before = await setup.auth(token);
    expect(before.status).toBe(204);
    expect(before.headers['x-gateway-valid-until']).toBe(String(Math.floor(expiresAt / 1000)));
    // Time passing, written as SQL: the expiry now lies behind.
    const db = new pg.Client({ connectionString: databaseUrl });
    await db.connect();
    try {
      await db.query(
        `UPDATE api_clients SET expires_at = now() - interval '1 second' WHERE id = $1`,
        [id],
      );
    } finally {
      await db.end();
    }
    expectRefused(await setup.auth(token), 'the API client has expired', 'API_CLIENT_EXPIRED');
  });
});

describe('a valid token of a matching client', () => {
  test('passes with the identity headers (provider-issued token)', async () => {
    const res = await setup.auth(alphaToken);
    expect(res.status, res.text).toBe(204);
    expect(res.headers['x-client-id']).toBe('svc-alpha');
    expect(res.headers['x-client-name']).toBe('svc-alpha');
    expect(res.headers['x-client-is-admin']).toBe('false');
    expect(res.headers['x-auth-method']).toBe('bearer');
    expect(res.headers['x-jwt-error']).toBeUndefined();
    // nginx keeps the decision no longer than the token lives.
    const exp = JSON.parse(Buffer.from(alphaToken.split('.')[1] ?? '', 'base64url').toString()).exp;
    expect(res.headers['x-gateway-valid-until']).toBe(String(exp));
    expect(Number(res.headers['x-gateway-client-row'])).toBeGreaterThan(0);
  });

  test('the matching API client decides admin: admin passes on management paths, others 403', async () => {
    const admin = await setup.auth(await setup.provider.issueToken('svc-admin'), {
      'X-Original-URI': '/v1/management/api-clients',
    });
    expect(admin.status, admin.text).toBe(204);
    expect(admin.headers['x-client-is-admin']).toBe('true');
    const user = await setup.auth(alphaToken, { 'X-Original-URI': '/v1/management/api-clients' });
    expect(user.status).toBe(403);
  });

  test('an admin token works on the management API itself', async () => {
    const token = await setup.provider.issueToken('svc-admin');
    const res = await http(`${setup.sidecar.url}${CLIENTS}/${alphaId}`, {
      headers: {
        ...nginxOidcHeaders(setup.provider.discoveryUrl),
        Authorization: `Bearer ${token}`,
      },
    });
    expect(res.status, res.text).toBe(200);
    expect(res.json).toMatchObject({ api_client_id: 'svc-alpha', has_api_key: false });
  });

  test('an admin by bearer token is the actor of the audit events it causes', async () => {
    const token = await setup.provider.issueToken('svc-admin');
    const bearer = {
      ...nginxOidcHeaders(setup.provider.discoveryUrl),
      Authorization: `Bearer ${token}`,
    };
    const created = await http(`${setup.sidecar.url}${CLIENTS}`, {
      method: 'POST',
      headers: bearer,
      json: { name: `by-bearer-${now()}`, is_admin: false, generate_api_key: true },
    });
    expect(created.status, created.text).toBe(201);
    const id = (created.json as { api_key_id: number }).api_key_id;
    const events = await http(`${setup.sidecar.url}/v1/management/audit-events?target=${id}`, {
      headers: bearer,
    });
    expect(events.status, events.text).toBe(200);
    const [event] = (events.json as { items: Record<string, unknown>[] }).items;
    expect(event).toMatchObject({
      action: 'api_client.create',
      outcome: 'success',
      actor: { name: 'svc-admin', auth_method: 'bearer' },
    });
    expect((event!.actor as { api_key_id: number }).api_key_id).toBeGreaterThan(0);
    // No token in the trail.
    expect(events.text).not.toContain(token.split('.')[2]!);
  });

  test('the management API refuses a bad token itself, with the same X-jwt-error', async () => {
    const expired = await setup.provider.sign({
      sub: 'svc-admin',
      iat: now() - 900,
      exp: now() - 300,
    });
    const res = await http(`${setup.sidecar.url}${CLIENTS}`, {
      headers: {
        ...nginxOidcHeaders(setup.provider.discoveryUrl),
        Authorization: `Bearer ${expired}`,
      },
    });
    expect(res.status).toBe(401);
    expect(res.headers['x-jwt-error']).toBe('token expired');
    expect(res.headers['www-authenticate']).toBe('Bearer error="invalid_token"');
    expect(res.json).toEqual({ errors: [expect.objectContaining({ code: 'INVALID_TOKEN' })] });
  });

  test('the audience option passes a token for that audience', async () => {
    expect(claimsOf(alphaToken).aud).toBe(RESOURCE);
    const res = await setup.auth(alphaToken, { 'X-Gateway-Oidc-Audience': RESOURCE });
    expect(res.status, res.text).toBe(204);
  });

  test('other claims can give client id and name (hand-signed)', async () => {
    const token = await setup.provider.sign({
      sub: 'someone-else',
      azp: 'svc-alpha',
      preferred_username: 'Zoë Ålpha',
    });
    const res = await setup.auth(token, {
      'X-Gateway-Oidc-Client-Id-Claim': 'azp',
      'X-Gateway-Oidc-Client-Name-Claim': 'preferred_username',
    });
    expect(res.status, res.text).toBe(204);
    expect(res.headers['x-client-id']).toBe('svc-alpha');
    expect(decodeURIComponent(String(res.headers['x-client-name']))).toBe('Zoë Ålpha');
  });

  test("without the name claim, the API client's own name stands in", async () => {
    const res = await setup.auth(alphaToken, {
      'X-Gateway-Oidc-Client-Name-Claim': 'preferred_username',
    });
    expect(res.status, res.text).toBe(204);
    expect(decodeURIComponent(String(res.headers['x-client-name']))).toBe('Alpha service');
  });

  test('the algorithm check can be relaxed for an algorithm the provider does not advertise', async () => {
    const token = await setup.provider.sign({ sub: 'svc-alpha' }, { alg: 'PS256' });
    const res = await setup.auth(token, { 'X-Gateway-Oidc-Accept-Unsupported-Alg': 'true' });
    expect(res.status, res.text).toBe(204);
  });
});

describe('refused with 401 and a meaningful X-jwt-error', () => {
  const cases: [string, () => Promise<string>, string, Record<string, string>?][] = [
    [
      'expired (hand-signed, beyond the leeway)',
      () => setup.provider.sign({ sub: 'svc-alpha', iat: now() - 900, exp: now() - 300 }),
      'token expired',
    ],
    [
      'not yet valid (hand-signed nbf)',
      () => setup.provider.sign({ sub: 'svc-alpha', nbf: now() + 300 }),
      'token not yet valid',
    ],
    [
      'issued in the future (hand-signed iat)',
      () => setup.provider.sign({ sub: 'svc-alpha', iat: now() + 300 }),
      'token issued in the future ("iat")',
    ],
    [
      'without exp (hand-signed)',
      () => setup.provider.sign({ sub: 'svc-alpha', exp: undefined }),
      'missing required "exp" claim',
    ],
    [
      'a wrong issuer (hand-signed)',
      () => setup.provider.sign({ sub: 'svc-alpha', iss: 'https://evil.example' }),
      'unexpected "iss" claim value',
    ],
    [
      'a wrong audience, with the option set (provider-issued)',
      async () => alphaToken,
      'unexpected "aud" claim value',
      { 'X-Gateway-Oidc-Audience': 'https://other.gateway.test' },
    ],
    [
      'a tampered payload: sub changed to an admin (provider-issued)',
      async () => withPayload(alphaToken, { sub: 'svc-admin' }),
      'signature verification failed',
    ],
    [
      'a tampered signature (provider-issued)',
      async () => withFlippedSignatureBit(alphaToken),
      'signature verification failed',
    ],
    [
      'alg none',
      async () => unsignedToken(setup.provider, { sub: 'svc-alpha' }),
      'unsupported algorithm none',
    ],
    [
      'alg none, even with accept_none_alg true',
      async () => unsignedToken(setup.provider, { sub: 'svc-alpha' }),
      'unsigned tokens (alg none) are never accepted as bearer tokens',
      { 'X-Gateway-Oidc-Accept-None-Alg': 'true' },
    ],
    [
      "HS256 signed with the provider's public key",
      () => hs256WithPublicKey(setup.provider, { sub: 'svc-admin' }),
      'symmetric algorithm "HS256" is not accepted',
    ],
    [
      "HS256 signed with the provider's public key, even with accept_unsupported_alg true",
      () => hs256WithPublicKey(setup.provider, { sub: 'svc-admin' }),
      'symmetric algorithm "HS256" is not accepted',
      { 'X-Gateway-Oidc-Accept-Unsupported-Alg': 'true' },
    ],
    [
      'an algorithm the provider does not advertise (hand-signed PS256 with its own key)',
      () => setup.provider.sign({ sub: 'svc-alpha' }, { alg: 'PS256' }),
      'algorithm "PS256" is not advertised by the identity provider',
    ],
    [
      'a kid the provider never had',
      () => signedByStranger(setup.provider, { sub: 'svc-alpha' }, 'never-had'),
      'no key with kid "never-had" at the identity provider',
    ],
    [
      "a stranger's key under the provider's kid",
      () => signedByStranger(setup.provider, { sub: 'svc-alpha' }, setup.provider.signingKey.kid),
      'signature verification failed',
    ],
    ['not a JWT', async () => 'abc', 'malformed token (not a signed JWT)'],
    [
      'a header that is not JSON',
      async () => 'e30x.e30.e30',
      'malformed token (unreadable header)',
    ],
    [
      'a claim other than the one configured (hand-signed)',
      () => setup.provider.sign({ sub: 'svc-alpha' }),
      'token has no string "azp" claim',
      { 'X-Gateway-Oidc-Client-Id-Claim': 'azp' },
    ],
    [
      'no discovery URL from nginx',
      async () => alphaToken,
      'OpenID Connect discovery URL is not configured correctly',
      { 'X-Gateway-Oidc-Discovery': '' },
    ],
  ];
  test.each(cases)('%s', async (_what, token, jwtError, headers = {}) => {
    expectRefused(await setup.auth(await token(), headers), jwtError);
  });

  test('a subject with no matching API client (provider-issued)', async () => {
    const res = await setup.auth(await setup.provider.issueToken('svc-orphan'));
    expectRefused(res, 'no API client for this token', 'UNKNOWN_CLIENT');
  });

  test.each(['SVC-ALPHA', 'svc-alpha ', 'svc-alph'])(
    'a subject that only nearly matches (%j, hand-signed) has no client',
    async (sub) => {
      const res = await setup.auth(await setup.provider.sign({ sub }));
      expectRefused(res, 'no API client for this token', 'UNKNOWN_CLIENT');
    },
  );

  test('a client deleted a moment ago through the management API', async () => {
    const id = await setup.addClient('svc-doomed');
    const token = await setup.provider.issueToken('svc-doomed');
    expect((await setup.auth(token)).status).toBe(204);
    const deleted = await http(`${setup.sidecar.url}${CLIENTS}/${id}`, {
      method: 'DELETE',
      headers: apk(setup.sidecar.adminKey),
    });
    expect(deleted.status).toBe(200);
    expectRefused(await setup.auth(token), 'no API client for this token', 'UNKNOWN_CLIENT');
  });

  test('a client whose api_client_id was changed by PUT a moment ago', async () => {
    const id = await setup.addClient('svc-moved');
    const token = await setup.provider.issueToken('svc-moved');
    expect((await setup.auth(token)).status).toBe(204);
    const moved = await http(`${setup.sidecar.url}${CLIENTS}/${id}`, {
      method: 'PUT',
      headers: apk(setup.sidecar.adminKey),
      json: { api_client_id: 'svc-moved-elsewhere' },
    });
    expect(moved.status).toBe(200);
    // The very next question decides with the new value: the token's sub matches no client.
    expectRefused(await setup.auth(token), 'no API client for this token', 'UNKNOWN_CLIENT');
    const back = await http(`${setup.sidecar.url}${CLIENTS}/${id}`, {
      method: 'PUT',
      headers: apk(setup.sidecar.adminKey),
      json: { api_client_id: 'svc-moved' },
    });
    expect(back.status).toBe(200);
    expect((await setup.auth(token)).status).toBe(204);
  });

  test('a client deleted a moment ago with plain SQL', async () => {
    await setup.addClient('svc-doomed-sql');
    const token = await setup.provider.issueToken('svc-doomed-sql');
    expect((await setup.auth(token)).status).toBe(204);
    const db = new pg.Client({ connectionString: databaseUrl });
    await db.connect();
    try {
      await db.query(`DELETE FROM api_clients WHERE api_client_id = 'svc-doomed-sql'`);
    } finally {
      await db.end();
    }
    // No cache in the sidecar (revocation decision): the very next request is refused.
    expectRefused(await setup.auth(token), 'no API client for this token', 'UNKNOWN_CLIENT');
  });
});
