import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { type OidcOptions, readToggles } from '../../../sidecar/auth/method-toggles.js';
import { SidecarMetrics } from '../../../sidecar/metrics/sidecar-metrics.js';
import { OidcBearerVerifier } from '../../../sidecar/oidc/verifier.js';
import { directoryOf, row } from '../support/clients.js';
import { makeKey, startKeyServer } from '../support/key-server.js';
import { recordingLogger } from '../support/serve.js';

const NOW = 1_800_000_000;
const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

let provider: Awaited<ReturnType<typeof startKeyServer>>;
const key = makeKey('k1');
const stranger = makeKey('k1');
const rsa = makeKey('r1', 'RS256');
const subjects: string[] = [];
const clients = directoryOf([
  row(5, { apiClientId: 'robot@idp', name: 'robot client', isAdmin: true }),
  row(6, { apiClientId: 'x'.repeat(1024) }),
  row(7, { apiClientId: 'expired@idp', expiresAt: new Date(NOW * 1000) }),
  row(8, { apiClientId: 'soon@idp', expiresAt: new Date(NOW * 1000 + 100_500) }),
]);
const recordingClients = {
  bySubject: (subject: string) => {
    subjects.push(subject);
    return clients.bySubject(subject);
  },
};
const { log, lines } = recordingLogger();
let verifier: OidcBearerVerifier;
/** No cool-down between key-set fetches: every test sees the provider's answer at once. */
const SETTINGS = {
  extraCa: [],
  clockToleranceSeconds: 30,
  httpTimeoutMs: 2_000,
  jwksCooldownMs: 0,
  cacheMaxAgeMs: 600_000,
  maxStaleMs: 600_000,
};

beforeAll(async () => {
  provider = await startKeyServer([key, rsa]);
});
afterAll(() => provider.close());
beforeEach(() => {
  subjects.length = 0;
  lines.length = 0;
  provider.state.discovery = null;
  provider.state.jwks = null;
  provider.state.hits = { discovery: 0, jwks: 0 };
  // A new verifier per test: nothing cached from the test before.
  verifier = new OidcBearerVerifier(SETTINGS, recordingClients, log, () => NOW * 1000);
});

const options = (extra: Partial<OidcOptions> = {}): OidcOptions => ({
  ...readToggles({}).oidcOptions,
  discovery: provider.discoveryUrl,
  ...extra,
});

/** The `X-jwt-error` text of a refusal, or 'accepted'. */
async function outcome(token: string, extra: Partial<OidcOptions> = {}): Promise<string> {
  const decision = await verifier.verify(token, options(extra));
  return decision.ok ? 'accepted' : `${decision.code}: ${decision.jwtError}`;
}

describe('OidcBearerVerifier', () => {
  test('its fetches of the discovery document and the key set are counted, each by its name', async () => {
    const metrics = new SidecarMetrics();
    const counted = new OidcBearerVerifier(
      SETTINGS,
      recordingClients,
      log,
      () => NOW * 1000,
      metrics,
    );
    const token = await provider.sign({ sub: 'robot@idp' }, NOW);
    expect((await counted.verify(token, options())).ok).toBe(true);
    const text = await metrics.text();
    expect(text).toContain('gateway_oidc_fetches_total{resource="discovery",result="ok"} 1');
    expect(text).toContain('gateway_oidc_fetches_total{resource="jwks",result="ok"} 1');
  });

  test('a valid token of a known client: its identity from the claims, the client admin flag, valid until exp', async () => {
    const token = await provider.sign({ sub: 'robot@idp' }, NOW);
    expect(await verifier.verify(token, options())).toEqual({
      ok: true,
      method: 'bearer',
      validUntil: NOW + 600,
      identity: {
        id: 5,
        clientId: 'robot@idp',
        clientName: 'robot@idp',
        isAdmin: true,
        rateLimit: null,
        permissions: null,
      },
    });
    expect(subjects).toEqual(['robot@idp']);
  });

  test('the configured claims give client id and name; RS256 works too', async () => {
    const token = await provider.sign({ azp: 'robot@idp', name: 'Robot' }, NOW, { key: rsa });
    expect(
      await verifier.verify(token, options({ clientIdClaim: 'azp', clientNameClaim: 'name' })),
    ).toMatchObject({ ok: true, identity: { clientId: 'robot@idp', clientName: 'Robot' } });
  });

  test("validUntil is the token's own exp, not a fixed lifetime", async () => {
    const token = await provider.sign({ sub: 'robot@idp', exp: NOW + 45 }, NOW);
    expect(await verifier.verify(token, options())).toMatchObject({
      ok: true,
      validUntil: NOW + 45,
    });
  });

  test("without a name claim (or an empty one) the client's own name stands in", async () => {
    const none = await provider.sign({ azp: 'robot@idp' }, NOW);
    const empty = await provider.sign({ azp: 'robot@idp', name: '' }, NOW);
    const number = await provider.sign({ azp: 'robot@idp', name: 7 }, NOW);
    for (const token of [none, empty, number]) {
      expect(
        await verifier.verify(token, options({ clientIdClaim: 'azp', clientNameClaim: 'name' })),
      ).toMatchObject({ ok: true, identity: { clientName: 'robot client' } });
    }
  });

  test('a valid token of an expired client: API_CLIENT_EXPIRED, naming the client', async () => {
    const token = await provider.sign({ sub: 'expired@idp' }, NOW);
    expect(await verifier.verify(token, options())).toEqual({
      ok: false,
      code: 'API_CLIENT_EXPIRED',
      message: 'The API client has expired.',
      scheme: 'bearer',
      jwtError: 'the API client has expired',
      clientRow: 7,
    });
  });

  test('validUntil is the earlier of exp and the client expiry (whole seconds, rounded down)', async () => {
    const late = await provider.sign({ sub: 'soon@idp', exp: NOW + 600 }, NOW);
    expect(await verifier.verify(late, options())).toMatchObject({
      ok: true,
      validUntil: NOW + 100,
    });
    const early = await provider.sign({ sub: 'soon@idp', exp: NOW + 45 }, NOW);
    expect(await verifier.verify(early, options())).toMatchObject({
      ok: true,
      validUntil: NOW + 45,
    });
  });

  test('no client for the subject: UNKNOWN_CLIENT', async () => {
    const token = await provider.sign({ sub: 'stranger@idp' }, NOW);
    expect(await verifier.verify(token, options())).toEqual({
      ok: false,
      code: 'UNKNOWN_CLIENT',
      message: 'No API client matches this bearer token.',
      scheme: 'bearer',
      jwtError: 'no API client for this token',
    });
  });

  // The management API takes an api_client_id of up to 1024 characters; the lookup took 255.
  test('a subject of 1024 characters is looked up, a longer one refused without a query', async () => {
    expect(await outcome(await provider.sign({ sub: 'x'.repeat(1024) }, NOW))).toBe('accepted');
    expect(await outcome(await provider.sign({ sub: 'x'.repeat(1025) }, NOW))).toBe(
      'UNKNOWN_CLIENT: no API client for this token',
    );
    expect(subjects).toEqual(['x'.repeat(1024)]);
  });

  test.each([
    ['no sub claim', { sub: undefined }, 'token has no string "sub" claim'],
    ['an empty sub', { sub: '' }, 'token has no string "sub" claim'],
    ['a numeric sub', { sub: 5 }, 'token has no string "sub" claim'],
  ])('%s: refused', async (_what, claims, reason) => {
    const token = await provider.sign(claims as Record<string, unknown>, NOW);
    expect(await outcome(token)).toBe(`INVALID_TOKEN: ${reason}`);
  });

  test('the claim name in the reason is cut to 64 characters', async () => {
    const token = await provider.sign({ sub: 'robot@idp' }, NOW);
    expect(await outcome(token, { clientIdClaim: 'c'.repeat(80) })).toBe(
      `INVALID_TOKEN: token has no string "${'c'.repeat(64)}" claim`,
    );
  });

  test('refusals are INVALID_TOKEN values with the reason in jwtError', async () => {
    expect(await verifier.verify('a.b', options())).toEqual({
      ok: false,
      code: 'INVALID_TOKEN',
      message: 'The bearer token is not valid.',
      scheme: 'bearer',
      jwtError: 'malformed token (not a signed JWT)',
    });
  });

  test.each([
    ['two parts', 'a.b', 'malformed token (not a signed JWT)'],
    ['four parts', 'a.b.c.d', 'malformed token (not a signed JWT)'],
    ['an unreadable header', 'e30x.e30.e30', 'malformed token (unreadable header)'],
    [
      'a header that is not JSON',
      `${Buffer.from('nope').toString('base64url')}.e30.x`,
      'malformed token (unreadable header)',
    ],
    ['no alg', `${b64({ typ: 'JWT' })}.e30.x`, 'token header has no "alg"'],
    [
      'alg none',
      `${b64({ alg: 'none' })}.${b64({ sub: 'robot@idp' })}.`,
      'unsupported algorithm none',
    ],
    ['alg HS256', `${b64({ alg: 'HS256' })}.e30.x`, 'symmetric algorithm "HS256" is not accepted'],
  ])('%s: refused before any network', async (_what, token, reason) => {
    expect(await outcome(token)).toBe(`INVALID_TOKEN: ${reason}`);
    expect(provider.state.hits.discovery).toBe(0);
  });

  test('a token of 16384 characters is read, one character more is refused unread', async () => {
    const padded = (length: number) => {
      const head = `${b64({ alg: 'HS256' })}.`;
      return `${head}${'A'.repeat(length - head.length - 2)}.x`;
    };
    expect(await outcome(padded(16 * 1024))).toBe(
      'INVALID_TOKEN: symmetric algorithm "HS256" is not accepted',
    );
    expect(await outcome(padded(16 * 1024 + 1))).toBe('INVALID_TOKEN: token too large');
  });

  test.each([
    ['not a URL', 'not a url', 'nginx forwarded no valid OpenID Connect discovery URL'],
    [
      'not http(s)',
      'ftp://idp.example/.well-known/openid-configuration',
      'the OpenID Connect discovery URL must be http(s)',
    ],
  ])('a discovery URL that is %s: refused and logged', async (_what, discovery, message) => {
    const token = await provider.sign({ sub: 'robot@idp' }, NOW);
    expect(await outcome(token, { discovery })).toBe(
      'INVALID_TOKEN: OpenID Connect discovery URL is not configured correctly',
    );
    expect(lines).toEqual([{ level: 'error', message, fields: { discovery } }]);
  });

  test('an https discovery URL is used (here: nobody listens)', async () => {
    const token = await provider.sign({ sub: 'robot@idp' }, NOW);
    expect(await outcome(token, { discovery: 'https://127.0.0.1:9/.well-known/x' })).toBe(
      'INVALID_TOKEN: OpenID Connect discovery failed: identity provider unreachable',
    );
    expect(lines).toEqual([]);
  });

  test('an unexpected fault while checking (an unusable published key) refuses and is logged', async () => {
    provider.state.jwks = { keys: [{ kty: 'EC', crv: 'P-256', kid: 'k1', x: 'AAAA', y: 'AAAA' }] };
    const token = await provider.sign({ sub: 'robot@idp' }, NOW);
    expect(await outcome(token)).toBe('INVALID_TOKEN: token verification failed');
    expect(lines).toEqual([
      {
        level: 'error',
        message: 'unexpected error while verifying a bearer token; refused',
        fields: { error: expect.any(String) },
      },
    ]);
  });

  test('a provider RSA key under 2048 bits: a fault, refused and logged', async () => {
    const { createSign, generateKeyPairSync } = await import('node:crypto');
    const small = generateKeyPairSync('rsa', { modulusLength: 1024 });
    provider.state.jwks = {
      keys: [{ ...small.publicKey.export({ format: 'jwk' }), kid: 'weak', use: 'sig' }],
    };
    // jose will not sign with such a key either: signed by hand.
    const input = `${b64({ alg: 'RS256', kid: 'weak' })}.${b64({ iss: provider.issuer, sub: 'robot@idp', exp: NOW + 600 })}`;
    const token = `${input}.${createSign('sha256').update(input).sign(small.privateKey).toString('base64url')}`;
    expect(await outcome(token)).toBe('INVALID_TOKEN: token verification failed');
    expect(lines).toEqual([
      {
        level: 'error',
        message: 'unexpected error while verifying a bearer token; refused',
        fields: { error: 'RS256 requires key modulusLength to be 2048 bits or larger' },
      },
    ]);
  });

  test('no kid, several keys published: the one that signed it is found', async () => {
    const other = makeKey('k2');
    provider.state.jwks = {
      keys: [other.jwk, key.jwk].map((jwk) => ({ ...jwk, kid: undefined })),
    };
    const token = await provider.sign({ sub: 'robot@idp' }, NOW, { header: { kid: undefined } });
    expect(
      JSON.parse(Buffer.from(token.split('.')[0]!, 'base64url').toString()),
    ).not.toHaveProperty('kid');
    expect(await outcome(token)).toBe('accepted');
    const stray = await provider.sign({ sub: 'robot@idp' }, NOW, {
      key: stranger,
      header: { kid: undefined },
    });
    expect(await outcome(stray)).toBe('INVALID_TOKEN: signature verification failed');
  });

  test('an algorithm the provider does not advertise: refused unless accept_unsupported_alg', async () => {
    provider.state.discovery = {
      issuer: provider.issuer,
      jwks_uri: `${provider.issuer}/jwks`,
      id_token_signing_alg_values_supported: ['ES256'],
    };
    const token = await provider.sign({ sub: 'robot@idp' }, NOW, { key: rsa });
    expect(await outcome(token)).toBe(
      'INVALID_TOKEN: algorithm "RS256" is not advertised by the identity provider',
    );
    expect(await outcome(token, { acceptUnsupportedAlg: true })).toBe('accepted');
  });

  test('a signature by another key under a known kid: refused', async () => {
    const token = await provider.sign({ sub: 'robot@idp' }, NOW, { key: stranger });
    expect(await outcome(token)).toBe('INVALID_TOKEN: signature verification failed');
  });

  test('a kid the provider does not have: refused', async () => {
    const token = await provider.sign({ sub: 'robot@idp' }, NOW, { header: { kid: 'gone' } });
    expect(await outcome(token)).toBe(
      'INVALID_TOKEN: no key with kid "gone" at the identity provider',
    );
  });

  test('a token signed with RS256 but labelled ES256 is refused', async () => {
    const token = await provider.sign({ sub: 'robot@idp' }, NOW, {
      key: rsa,
      header: { kid: 'k1' },
    });
    expect(await outcome(token)).not.toBe('accepted');
  });

  test.each([
    ['another issuer', { iss: 'https://evil.example' }, 'unexpected "iss" claim value'],
    ['expired beyond the tolerance', { exp: NOW - 31 }, 'token expired'],
    ['no exp', { exp: undefined }, 'missing required "exp" claim'],
    ['nbf beyond the tolerance', { nbf: NOW + 31 }, 'token not yet valid'],
    ['iat beyond the tolerance', { iat: NOW + 31 }, 'token issued in the future ("iat")'],
  ])('%s: refused', async (_what, claims, reason) => {
    const token = await provider.sign({ sub: 'robot@idp', ...claims }, NOW);
    expect(await outcome(token)).toBe(`INVALID_TOKEN: ${reason}`);
  });

  test.each([
    ['expired within the tolerance', { exp: NOW - 29 }],
    ['nbf within the tolerance', { nbf: NOW + 29 }],
    ['iat exactly at the tolerance', { iat: NOW + 30 }],
    ['iat a little in the future', { iat: NOW + 1 }],
  ])('%s: accepted', async (_what, claims) => {
    const token = await provider.sign({ sub: 'robot@idp', ...claims }, NOW);
    expect(await outcome(token)).toBe('accepted');
  });

  test('the audience is checked only when configured', async () => {
    const token = await provider.sign({ sub: 'robot@idp', aud: 'other' }, NOW);
    expect(await outcome(token)).toBe('accepted');
    expect(await outcome(token, { audience: 'gateway' })).toBe(
      'INVALID_TOKEN: unexpected "aud" claim value',
    );
    const right = await provider.sign({ sub: 'robot@idp', aud: ['x', 'gateway'] }, NOW);
    expect(await outcome(right, { audience: 'gateway' })).toBe('accepted');
  });

  test('a provider that cannot be reached: refused with the provider error', async () => {
    const token = await provider.sign({ sub: 'robot@idp' }, NOW);
    expect(await outcome(token, { discovery: 'http://127.0.0.1:9/.well-known/x' })).toBe(
      'INVALID_TOKEN: OpenID Connect discovery failed: identity provider unreachable',
    );
  });
});
