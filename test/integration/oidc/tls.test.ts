import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { freshDatabase } from '../../support/database.js';
import { type OidcSetup, startOidcSetup } from '../../support/oidc-setup.js';
import { type OidcTestSidecar, startOidcSidecar } from '../../support/oidc-sidecar.js';

// The provider's certificate comes from a test CA. `setup.sidecar` trusts it through
// OIDC_CA_FILE; `untrusting` is a second sidecar on the same database without that file.
let setup: OidcSetup;
let untrusting: OidcTestSidecar;
let token: string;

beforeAll(async () => {
  const databaseUrl = await freshDatabase();
  setup = await startOidcSetup(databaseUrl, ['svc-tls']);
  untrusting = await startOidcSidecar(databaseUrl);
  await setup.addClient('svc-tls');
  token = await setup.provider.issueToken('svc-tls');
});
afterAll(async () => {
  await untrusting?.close();
  await setup?.close();
});

describe('ssl_verify "yes"', () => {
  test('against a provider whose certificate is not trusted: fails closed', async () => {
    for (let i = 0; i < 3; i += 1) {
      const res = await setup.auth(token, { 'X-Gateway-Oidc-Ssl-Verify': 'yes' }, untrusting);
      expect(res.status).toBe(401);
      expect(res.headers['x-jwt-error']).toBe(
        'OpenID Connect discovery failed: identity provider TLS certificate not trusted',
      );
      expect(res.headers['www-authenticate']).toBe('Bearer error="invalid_token"');
    }
    // The handshake failed, so no HTTP request ever reached the provider.
    expect(setup.provider.hits).toEqual({ discovery: 0, jwks: 0 });
  });

  test('with the CA configured (OIDC_CA_FILE): passes', async () => {
    const res = await setup.auth(token, { 'X-Gateway-Oidc-Ssl-Verify': 'yes' });
    expect(res.status, res.text).toBe(204);
    expect(res.headers['x-client-id']).toBe('svc-tls');
  });

  test('the header left out means "yes" (the spec default)', async () => {
    const res = await setup.auth(token, { 'X-Gateway-Oidc-Ssl-Verify': '' }, untrusting);
    expect(res.headers['x-jwt-error']).toBe(
      'OpenID Connect discovery failed: identity provider TLS certificate not trusted',
    );
  });
});

describe('ssl_verify "no"', () => {
  test('passes without the CA', async () => {
    const res = await setup.auth(token, { 'X-Gateway-Oidc-Ssl-Verify': 'no' }, untrusting);
    expect(res.status, res.text).toBe(204);
  });

  test('what was fetched without verification never answers a request that asks for it', async () => {
    const res = await setup.auth(token, { 'X-Gateway-Oidc-Ssl-Verify': 'yes' }, untrusting);
    expect(res.status).toBe(401);
    expect(res.headers['x-jwt-error']).toBe(
      'OpenID Connect discovery failed: identity provider TLS certificate not trusted',
    );
  });

  test('still checks the token itself', async () => {
    const forged = await setup.provider.sign({ sub: 'svc-tls', iss: 'https://evil.example' });
    const res = await setup.auth(forged, { 'X-Gateway-Oidc-Ssl-Verify': 'no' }, untrusting);
    expect(res.headers['x-jwt-error']).toBe('unexpected "iss" claim value');
  });
});

test('a bad ssl_verify value from nginx is a configuration fault (500), never a pass', async () => {
  const res = await setup.auth(token, { 'X-Gateway-Oidc-Ssl-Verify': 'maybe' });
  expect(res.status).toBe(500);
});
