import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { freshDatabase } from '../../support/database.js';
import {
  authWithBearer,
  type OidcTestSidecar,
  startOidcSidecar,
} from '../../support/oidc-sidecar.js';
import { createTestPki } from '../../support/oidc-tls.js';

// Providers that misbehave, played by a bare HTTPS server with the test CA's certificate:
// each must end in a 401 with a reason, never in a pass and never in a hang.
let server: Server;
let base: string;
let sidecar: OidcTestSidecar;
let dir: string;
let answer: (req: IncomingMessage, res: ServerResponse) => void = () => {};
// Any well-formed RS256 header will do: these providers fail before a key is looked at.
const token = `${Buffer.from('{"alg":"RS256","kid":"k"}').toString('base64url')}.e30.c2ln`;

beforeAll(async () => {
  const pki = createTestPki();
  dir = mkdtempSync(join(tmpdir(), 'gw-oidc-faults-'));
  writeFileSync(join(dir, 'ca.pem'), pki.caPem);
  server = createServer({ key: pki.serverKeyPem, cert: pki.serverCertPem }, (req, res) => {
    answer(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  sidecar = await startOidcSidecar(await freshDatabase(), {
    OIDC_CA_FILE: join(dir, 'ca.pem'),
    OIDC_HTTP_TIMEOUT_MS: '300',
  });
});
afterAll(async () => {
  await sidecar?.close();
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
  rmSync(dir, { recursive: true, force: true });
});

/** Each case gets its own discovery path, so no cached answer of another case interferes. */
let counter = 0;
async function authAgainst(behaviour: typeof answer): Promise<string | undefined> {
  answer = behaviour;
  counter += 1;
  const res = await authWithBearer(
    sidecar.url,
    `${base}/case-${counter}/.well-known/openid-configuration`,
    token,
  );
  expect(res.status).toBe(401);
  expect(res.headers['www-authenticate']).toBe('Bearer error="invalid_token"');
  return res.headers['x-jwt-error'] as string | undefined;
}

const json = (body: unknown) => (_req: IncomingMessage, res: ServerResponse) => {
  res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify(body));
};

describe('discovery', () => {
  test('a provider that never answers: refused after OIDC_HTTP_TIMEOUT_MS', async () => {
    const started = Date.now();
    expect(await authAgainst(() => {})).toBe(
      'OpenID Connect discovery failed: identity provider timed out',
    );
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  test.each([
    [
      'HTTP 500',
      (_: IncomingMessage, res: ServerResponse) => res.writeHead(500).end(),
      'identity provider answered HTTP 500',
    ],
    [
      'a redirect (not followed)',
      (_: IncomingMessage, res: ServerResponse) =>
        res.writeHead(302, { Location: 'https://evil.example/' }).end(),
      'identity provider answered HTTP 302',
    ],
    [
      'not JSON',
      (_: IncomingMessage, res: ServerResponse) => res.writeHead(200).end('<html>'),
      'identity provider answer is not JSON',
    ],
    [
      'an answer too large',
      (_: IncomingMessage, res: ServerResponse) => res.writeHead(200).end('x'.repeat(600_000)),
      'identity provider answer too large',
    ],
    ['a JSON list', json([]), 'document is not a JSON object'],
    ['no issuer', json({ jwks_uri: 'https://127.0.0.1/jwks' }), 'no "issuer"'],
    ['no jwks_uri', json({ issuer: 'https://idp' }), 'no valid "jwks_uri"'],
    [
      'keys over plain http',
      json({ issuer: 'https://idp', jwks_uri: 'http://127.0.0.1/jwks' }),
      '"jwks_uri" must use https',
    ],
  ])('%s', async (_what, behaviour, reason) => {
    expect(await authAgainst(behaviour)).toBe(`OpenID Connect discovery failed: ${reason}`);
  });
});

describe('key set', () => {
  const discovery = (jwks: unknown) => (req: IncomingMessage, res: ServerResponse) => {
    const prefix = (req.url ?? '').replace(/\/\.well-known\/openid-configuration$/, '');
    if (req.url?.endsWith('/jwks')) return json(jwks)(req, res);
    return json({
      issuer: 'https://idp',
      jwks_uri: `${base}${prefix}/jwks`,
      id_token_signing_alg_values_supported: ['RS256'],
    })(req, res);
  };

  test('not a key set', async () => {
    expect(await authAgainst(discovery({ nothing: true }))).toBe('key set failed: no "keys" list');
  });
});
