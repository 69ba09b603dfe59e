import { describe, expect, test } from 'vitest';
import { ApiKeyVerifier } from '../../../sidecar/auth/api-key-verifier.js';
import { Authenticator, challengeFor } from '../../../sidecar/auth/authenticator.js';
import type { BearerVerifier } from '../../../sidecar/auth/bearer-verifier.js';
import { type AuthDecision, type AuthFailure, refuse } from '../../../sidecar/auth/decision.js';
import { type MethodToggles, readToggles } from '../../../sidecar/auth/method-toggles.js';
import { hashSecret } from '../../../sidecar/keys/api-key.js';
import { directoryOf, row } from '../support/clients.js';

const SECRET = 's'.repeat(43);
const ADMIN_SECRET = 'a'.repeat(43);
const clients = directoryOf([
  row(1, { secret: SECRET, name: 'one' }),
  row(2, { secret: ADMIN_SECRET, isAdmin: true, name: 'admin' }),
  row(3, { apiClientId: 'robot@idp' }),
]);

/** A bearer verifier that accepts exactly the token "good" and records what it was asked. */
function bearer() {
  const calls: string[] = [];
  const verifier: BearerVerifier = {
    async verify(token) {
      calls.push(token);
      if (token !== 'good') return refuse('INVALID_TOKEN', 'bad', { scheme: 'bearer' });
      return {
        ok: true,
        method: 'bearer',
        identity: { id: 3, clientId: 'robot@idp', clientName: 'robot', isAdmin: false },
      };
    },
  };
  return { verifier, calls };
}

const toggles = (apiKeys: boolean, oidc: boolean): MethodToggles => ({
  ...readToggles({}),
  apiKeys,
  oidc,
});
const header = (value: string) => ['Authorization', value];
/** The decision without its key record (checked on its own where it matters). */
function withoutRecord(decision: AuthDecision): AuthDecision {
  const { keyRecord: _, ...rest } = decision;
  return rest;
}

describe('Authenticator', () => {
  test('a valid API key gives the client identity, and the key record nginx may keep', async () => {
    const auth = new Authenticator(new ApiKeyVerifier(clients), null);
    const one = {
      id: 1,
      clientId: '1',
      clientName: 'one',
      isAdmin: false,
      rateLimit: null,
      permissions: null,
    };
    expect(await auth.authenticate(header(`apk 1.${SECRET}`), toggles(true, false))).toEqual({
      ok: true,
      method: 'apk',
      identity: one,
      keyRecord: {
        kind: 'known',
        id: 1,
        identity: one,
        keyHash: hashSecret(SECRET),
        previous: null,
        expiresAt: null,
      },
    });
    expect(
      withoutRecord(await auth.authenticate(header(`apk 2.${ADMIN_SECRET}`), toggles(true, true))),
    ).toEqual({
      ok: true,
      method: 'apk',
      identity: {
        id: 2,
        clientId: '2',
        clientName: 'admin',
        isAdmin: true,
        rateLimit: null,
        permissions: null,
      },
    });
  });

  // The client a key names is kept (for the failure counts) only when it exists.
  test.each([
    ['wrong secret', `apk 1.${ADMIN_SECRET}`, { clientRow: 1 }],
    ['unknown id', `apk 9.${SECRET}`, {}],
    ['a client without a key', `apk 3.${SECRET}`, { clientRow: 3 }],
  ])('%s: INVALID_API_KEY', async (_what, value, named) => {
    const auth = new Authenticator(new ApiKeyVerifier(clients), null);
    const decision = await auth.authenticate(header(value), toggles(true, false));
    expect(withoutRecord(decision)).toEqual({
      ok: false,
      code: 'INVALID_API_KEY',
      message: 'The API key is not valid.',
      scheme: 'apk',
      ...named,
    });
    // The record of the id asked about goes with the refusal: nginx answers the next ones.
    expect(decision.keyRecord).toMatchObject(
      'clientRow' in named ? { kind: 'known', id: named.clientRow } : { kind: 'unknown', id: 9 },
    );
  });

  test('a malformed key: MALFORMED_CREDENTIALS with the reason', async () => {
    const auth = new Authenticator(new ApiKeyVerifier(clients), null);
    expect(await auth.authenticate(header('apk 1.short'), toggles(true, false))).toEqual({
      ok: false,
      code: 'MALFORMED_CREDENTIALS',
      message: 'The API key secret has the wrong length.',
      scheme: 'apk',
    });
  });

  test('no method on: NO_METHOD_ENABLED, even for a valid key', async () => {
    const auth = new Authenticator(new ApiKeyVerifier(clients), bearer().verifier);
    expect(await auth.authenticate(header(`apk 1.${SECRET}`), toggles(false, false))).toEqual({
      ok: false,
      code: 'NO_METHOD_ENABLED',
      message: 'No authentication method is enabled on this gateway.',
    });
  });

  test('credential problems are reported before the method check', async () => {
    const auth = new Authenticator(new ApiKeyVerifier(clients), null);
    expect(await auth.authenticate([], toggles(true, false))).toMatchObject({
      code: 'MISSING_CREDENTIALS',
    });
  });

  test('API keys off: a valid key is METHOD_DISABLED', async () => {
    const auth = new Authenticator(new ApiKeyVerifier(clients), bearer().verifier);
    expect(await auth.authenticate(header(`apk 1.${SECRET}`), toggles(false, true))).toEqual({
      ok: false,
      code: 'METHOD_DISABLED',
      message: 'API keys are disabled on this gateway.',
      scheme: 'apk',
    });
  });

  test('OIDC off: a bearer token is METHOD_DISABLED and never verified', async () => {
    const b = bearer();
    const auth = new Authenticator(new ApiKeyVerifier(clients), b.verifier);
    expect(await auth.authenticate(header('Bearer good'), toggles(true, false))).toEqual({
      ok: false,
      code: 'METHOD_DISABLED',
      message: 'Bearer tokens are disabled on this gateway.',
      scheme: 'bearer',
      jwtError: 'bearer tokens are disabled',
    });
    expect(b.calls).toEqual([]);
  });

  test('OIDC on: the bearer verifier decides, given the token', async () => {
    const b = bearer();
    const auth = new Authenticator(new ApiKeyVerifier(clients), b.verifier);
    expect(await auth.authenticate(header('Bearer good'), toggles(false, true))).toMatchObject({
      ok: true,
      method: 'bearer',
    });
    expect(await auth.authenticate(header('bearer bad'), toggles(false, true))).toMatchObject({
      ok: false,
      code: 'INVALID_TOKEN',
    });
    expect(b.calls).toEqual(['good', 'bad']);
  });

  test('OIDC on without a verifier: INVALID_TOKEN with a jwt error', async () => {
    const auth = new Authenticator(new ApiKeyVerifier(clients), null);
    expect(await auth.authenticate(header('Bearer good'), toggles(true, true))).toEqual({
      ok: false,
      code: 'INVALID_TOKEN',
      message: 'Bearer tokens cannot be verified by this sidecar.',
      scheme: 'bearer',
      jwtError: 'no verifier',
    });
  });
});

describe('challengeFor', () => {
  const failure = (extra: Partial<AuthFailure>): AuthFailure => ({
    ok: false,
    code: 'INVALID_TOKEN',
    message: 'x',
    ...extra,
  });

  test('a refused bearer token with OIDC on: Bearer error="invalid_token"', () => {
    expect(challengeFor(failure({ scheme: 'bearer' }), toggles(true, true))).toBe(
      'Bearer error="invalid_token"',
    );
  });

  test('a bearer token while OIDC is off names the methods that are on', () => {
    expect(
      challengeFor(failure({ scheme: 'bearer', code: 'METHOD_DISABLED' }), toggles(true, false)),
    ).toBe('apk');
    expect(challengeFor(failure({ scheme: 'bearer' }), toggles(true, false))).toBe('apk');
  });

  test('otherwise the schemes that are on, apk first', () => {
    expect(challengeFor(failure({ scheme: 'apk' }), toggles(true, true))).toBe('apk, Bearer');
    expect(challengeFor(failure({}), toggles(false, true))).toBe('Bearer');
    expect(challengeFor(failure({}), toggles(true, false))).toBe('apk');
    expect(challengeFor(failure({}), toggles(false, false))).toBe('apk');
  });
});
