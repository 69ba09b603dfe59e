import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { SIDECAR_PROOF } from '../../common/contract.js';
import { freshDatabase } from '../support/database.js';
import { type HttpOptions, http } from '../support/http.js';
import { CLIENTS } from '../support/management.js';
import { startNativeStack } from '../support/native-stack.js';
import { startProviderForGateway } from '../support/oidc-gateway-env.js';
import { TestOidcProvider } from '../support/oidc-provider.js';
import { createTestPki } from '../support/oidc-tls.js';
import { apk } from '../support/sidecar.js';
import { callStack } from '../support/stack-http.js';

// The sidecar trusts only nginx (docs/decisions/20261202-sidecar-trusts-only-nginx.md). A peer
// that reaches the sidecar's own socket names its own OpenID Connect provider in nginx's
// setting headers, with a token that provider minted for an admin's subject: without nginx's
// proof it is refused, in the one error shape, before a setting is read (the provider is never
// asked), and counted. Through nginx the same forgery changes nothing.

type NativeStack = Awaited<ReturnType<typeof startNativeStack>>;
let stack: NativeStack;
let gatewayProvider: TestOidcProvider;
/** The peer's own provider: it knows the admin's subject too, and signs what the peer asks. */
let forger: TestOidcProvider;
let scratch: string;
const ADMIN_SUBJECT = 'svc-trust-admin';
const USER_SUBJECT = 'svc-trust-user';

beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'gw-e2e-trust-'));
  const started = await startProviderForGateway(scratch, [ADMIN_SUBJECT, USER_SUBJECT]);
  gatewayProvider = started.provider;
  forger = await TestOidcProvider.start(createTestPki(), [ADMIN_SUBJECT]);
  stack = await startNativeStack({
    fqdn: 'gateway.e2e.test',
    env: { ...started.env, DATABASE_URL: await freshDatabase() },
  });
  for (const [id, isAdmin] of [
    [ADMIN_SUBJECT, true],
    [USER_SUBJECT, false],
  ] as const) {
    const res = await callStack(stack, CLIENTS, {
      method: 'POST',
      headers: apk(stack.adminKey),
      json: { name: id, is_admin: isAdmin, generate_api_key: false, api_client_id: id },
    });
    expect(res.status, res.text).toBe(201);
  }
}, 240_000);
afterAll(async () => {
  await stack?.close();
  await gatewayProvider?.stop();
  await forger?.stop();
  if (scratch) await rm(scratch, { recursive: true, force: true });
}, 120_000);

const sidecarSocket = () => join(stack.home, 'run', 'sidecar.sock');

/** nginx's setting headers as the peer forges them: its provider, TLS checks off. */
const forged = () => ({
  'X-Gateway-Api-Keys-Enabled': 'false',
  'X-Gateway-Oidc-Enabled': 'true',
  'X-Gateway-Oidc-Discovery': forger.discoveryUrl,
  'X-Gateway-Oidc-Ssl-Verify': 'no',
  'X-Gateway-Oidc-Client-Id-Claim': 'sub',
  'X-Gateway-Oidc-Client-Name-Claim': 'sub',
});

/** A request straight to the sidecar's own socket, as a peer that reaches it. */
const toSidecar = (path: string, options: HttpOptions = {}) =>
  http(`http://localhost${path}`, { ...options, socketPath: sidecarSocket() });

/** The sidecar's count of refused unproven requests, by `route` and `reason`. */
async function unproven(route: string, reason: string): Promise<number> {
  const text = await (await fetch(`${stack.gateway().metricsUrl}/metrics`)).text();
  const line = text
    .split('\n')
    .find((l) =>
      l.startsWith(`gateway_sidecar_unproven_requests_total{route="${route}",reason="${reason}"} `),
    );
  return Number(line?.split(' ')[1] ?? 0);
}

const PROOF_REFUSAL = {
  errors: [{ code: SIDECAR_PROOF.code, message: expect.stringContaining("gateway's nginx") }],
};

describe('the sidecar trusts only nginx', () => {
  test("a peer's forged provider and its admin token, straight to /auth: refused, unread, counted", async () => {
    const token = await forger.issueToken(ADMIN_SUBJECT);
    const before = await unproven('auth', 'missing');
    const res = await toSidecar('/auth', {
      headers: { ...forged(), Authorization: `Bearer ${token}` },
    });
    expect(res.status, res.text).toBe(403);
    expect(res.headers['content-type']).toBe('application/json');
    expect(res.json).toEqual(PROOF_REFUSAL);
    expect(res.headers['x-client-id']).toBeUndefined();
    expect(await unproven('auth', 'missing')).toBe(before + 1);
    // Refused before a setting header was read: the named provider was never asked.
    expect(forger.hits).toEqual({ discovery: 0, jwks: 0 });
  });

  test('a guessed proof is refused as wrong, a mangled one as malformed', async () => {
    const token = await forger.issueToken(ADMIN_SUBJECT);
    const headers = { ...forged(), Authorization: `Bearer ${token}` };
    const wrong = await unproven('auth', 'wrong');
    const malformed = await unproven('auth', 'malformed');
    const guessed = await toSidecar('/auth', {
      headers: { ...headers, [SIDECAR_PROOF.header]: 'f'.repeat(64) },
    });
    expect(guessed.status).toBe(403);
    expect(guessed.json).toEqual(PROOF_REFUSAL);
    const mangled = await toSidecar('/auth', {
      headers: { ...headers, [SIDECAR_PROOF.header]: 'nginx' },
    });
    expect(mangled.status).toBe(403);
    expect(await unproven('auth', 'wrong')).toBe(wrong + 1);
    expect(await unproven('auth', 'malformed')).toBe(malformed + 1);
    expect(forger.hits).toEqual({ discovery: 0, jwks: 0 });
  });

  test('the same forgery in an auth frame (the one hop nginx uses) is refused alike', async () => {
    const token = await forger.issueToken(ADMIN_SUBJECT);
    const lines = Object.entries({ ...forged(), Authorization: `Bearer ${token}` })
      .map(([name, value]) => `${name}: ${value}\n`)
      .join('');
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = connect({ path: sidecarSocket() });
      let text = '';
      socket.on('data', (chunk) => {
        text += chunk.toString('latin1');
        if (text.includes('}]}')) {
          socket.destroy();
          resolve(text);
        }
      });
      socket.on('error', reject);
      socket.write(`GWA1\n${lines}\n`);
    });
    expect(answer).toMatch(/^GWA1 403 \d+ \d+\n/);
    expect(answer).toContain(`"code":"${SIDECAR_PROOF.code}"`);
    expect(forger.hits).toEqual({ discovery: 0, jwks: 0 });
  });

  test('management straight to the sidecar: refused without reading the credential', async () => {
    const token = await forger.issueToken(ADMIN_SUBJECT);
    const before = await unproven('management', 'missing');
    const list = await toSidecar(CLIENTS, {
      headers: { ...forged(), Authorization: `Bearer ${token}` },
    });
    expect(list.status, list.text).toBe(403);
    expect(list.json).toEqual(PROOF_REFUSAL);
    const create = await toSidecar(CLIENTS, {
      method: 'POST',
      headers: { ...forged(), Authorization: `Bearer ${token}` },
      json: { name: 'planted', is_admin: true, generate_api_key: true },
    });
    expect(create.status).toBe(403);
    // Not even the gateway's own admin key gets past the missing proof.
    const withKey = await toSidecar(CLIENTS, { headers: apk(stack.adminKey) });
    expect(withKey.status).toBe(403);
    expect(await unproven('management', 'missing')).toBe(before + 3);
    const names = await callStack(stack, CLIENTS, {
      headers: apk(stack.adminKey),
    });
    expect(names.status, names.text).toBe(200);
    expect(names.text).not.toContain('"planted"');
  });

  test('health stays open to operators: /healthz answers without a proof', async () => {
    const res = await toSidecar('/healthz');
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ status: 'ok' });
  });

  test("with nginx's proof the setting headers are nginx's to set: the gate is what refused above", async () => {
    const secret = (await readFile(join(stack.configDir, SIDECAR_PROOF.file), 'utf8')).trim();
    const res = await toSidecar('/auth', {
      headers: {
        ...forged(),
        [SIDECAR_PROOF.header]: secret,
        Authorization: `Bearer ${await forger.issueToken(ADMIN_SUBJECT)}`,
      },
    });
    expect(res.status, res.text).toBe(204);
    expect(res.headers['x-client-id']).toBe(ADMIN_SUBJECT);
  });

  test("through nginx the gateway's own provider still works, and a caller's forgery changes nothing", async () => {
    const own = await callStack(stack, CLIENTS, {
      headers: { Authorization: `Bearer ${await gatewayProvider.issueToken(ADMIN_SUBJECT)}` },
    });
    expect(own.status, own.text).toBe(200);
    const user = await callStack(stack, '/api', {
      headers: { Authorization: `Bearer ${await gatewayProvider.issueToken(USER_SUBJECT)}` },
    });
    expect(user.status, user.text).not.toBe(401);
    expect(user.status).not.toBe(503);
    // The caller sends nginx's setting headers, and a proof of its own: nginx sets its own.
    const hits = { ...forger.hits };
    for (const path of [CLIENTS, '/api']) {
      const res = await callStack(stack, path, {
        headers: {
          ...forged(),
          [SIDECAR_PROOF.header]: 'f'.repeat(64),
          Authorization: `Bearer ${await forger.issueToken(ADMIN_SUBJECT)}`,
        },
      });
      expect(res.status, res.text).toBe(401);
      expect(res.headers['x-jwt-error']).toBeDefined();
    }
    expect(forger.hits).toEqual(hits);
  });
});
