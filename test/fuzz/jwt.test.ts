import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { type OidcOptions, readToggles } from '../../sidecar/auth/method-toggles.js';
import { refusalError } from '../../sidecar/auth/refusal.js';
import { silentLogger } from '../../sidecar/log.js';
import { OidcBearerVerifier } from '../../sidecar/oidc/verifier.js';
import { directoryOf, row } from '../unit/support/clients.js';
import { makeKey, startKeyServer } from '../unit/support/key-server.js';
import { anyJson, anyText, FUZZ_TIMEOUT_MS, params } from './runs.js';

// JWT compact form and claims handling, against a real (in-process) provider: arbitrary
// text, arbitrary headers and payloads signed with the provider's real key, and tampering.

const NOW = 1_800_000_000;
const TOLERANCE = 30;
const key = makeKey('k1');
let provider: Awaited<ReturnType<typeof startKeyServer>>;
let verifier: OidcBearerVerifier;
let options: OidcOptions;
const SUBJECTS = ['robot@idp', 'svc', 'ü'];

beforeAll(async () => {
  provider = await startKeyServer([key]);
  verifier = new OidcBearerVerifier(
    {
      extraCa: [],
      clockToleranceSeconds: TOLERANCE,
      httpTimeoutMs: 2_000,
      jwksCooldownMs: 60_000,
      cacheMaxAgeMs: 3_600_000,
      maxStaleMs: 3_600_000,
    },
    directoryOf(SUBJECTS.map((s, i) => row(i + 1, { apiClientId: s }))),
    silentLogger,
    () => NOW * 1000,
  );
  options = { ...readToggles({}).oidcOptions, discovery: provider.discoveryUrl };
});
afterAll(() => provider.close());

const b64 = (text: string) => Buffer.from(text).toString('base64url');

/** Every refusal is an INVALID_TOKEN/UNKNOWN_CLIENT value whose 401 has the one error shape. */
function expectWellFormedRefusal(decision: Awaited<ReturnType<OidcBearerVerifier['verify']>>) {
  expect(decision.ok).toBe(false);
  if (decision.ok) return;
  expect(['INVALID_TOKEN', 'UNKNOWN_CLIENT']).toContain(decision.code);
  const error = refusalError(decision, { ...readToggles({}), oidc: true });
  expect(error.status).toBe(401);
  expect(error.headers['X-jwt-error']).toMatch(/^[\x20-\x7e]{1,500}$/);
  expect(error.body()).toEqual({ errors: [{ code: decision.code, message: expect.any(String) }] });
}

/** The reference for claims: what a careful reading of RFC 7519 and our settings accepts. */
function claimsAcceptable(claims: Record<string, unknown>): boolean {
  const { iss, exp, nbf, iat, sub } = claims;
  const num = (v: unknown) => typeof v === 'number';
  if (iss !== provider.issuer) return false;
  if (!num(exp) || (exp as number) <= NOW - TOLERANCE) return false;
  if (nbf !== undefined && (!num(nbf) || (nbf as number) > NOW + TOLERANCE)) return false;
  if (iat !== undefined && (!num(iat) || (iat as number) > NOW + TOLERANCE)) return false;
  return typeof sub === 'string' && SUBJECTS.includes(sub);
}

const claimValue = (near: number) =>
  fc.oneof(
    fc.constant(undefined),
    fc.integer({ min: near - 100, max: near + 100 }),
    fc.double({ min: near - 100, max: near + 100, noNaN: true }),
    anyJson,
  );
const claimsArb = fc.record(
  {
    iss: fc.oneof(fc.constant('ISSUER'), anyText(20), anyJson),
    exp: claimValue(NOW),
    nbf: claimValue(NOW),
    iat: claimValue(NOW),
    sub: fc.oneof(fc.constantFrom(...SUBJECTS, ''), anyText(8), anyJson),
    aud: fc.oneof(anyText(8), anyJson),
  },
  { requiredKeys: [] },
);

/** Drops undefined members, which JSON would drop too, and fills in the issuer. */
function concrete(claims: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(claims)) {
    if (v !== undefined) out[k] = v === 'ISSUER' ? provider.issuer : v;
  }
  return out;
}

async function signRaw(header: Record<string, unknown>, payload: string): Promise<string> {
  // jose signs only JSON payloads; build the compact form by hand for arbitrary text.
  const signingInput = `${b64(JSON.stringify(header))}.${b64(payload)}`;
  const { createSign } = await import('node:crypto');
  const signature = createSign('SHA256')
    .update(signingInput)
    .sign({ key: key.privateKey, dsaEncoding: 'ieee-p1363' });
  return `${signingInput}.${signature.toString('base64url')}`;
}

describe('bearer tokens', () => {
  test(
    'arbitrary text is refused with a well-formed refusal, never an exception',
    async () => {
      const text = fc.oneof(
        anyText(200),
        fc.array(anyText(30), { minLength: 3, maxLength: 3 }).map((p) => p.join('.')),
        fc
          .tuple(anyJson, anyJson, anyText(20))
          .map(([h, p, s]) => `${b64(JSON.stringify(h))}.${b64(JSON.stringify(p))}.${s}`),
      );
      await fc.assert(
        fc.asyncProperty(text, async (token) => {
          expectWellFormedRefusal(await verifier.verify(token, options));
        }),
        params(),
      );
    },
    FUZZ_TIMEOUT_MS,
  );

  test(
    'validly signed tokens pass exactly when their claims pass the reference',
    async () => {
      await fc.assert(
        fc.asyncProperty(claimsArb, async (raw) => {
          const claims = concrete(raw);
          const token = await signRaw(
            { alg: 'ES256', kid: 'k1', typ: 'JWT' },
            JSON.stringify(claims),
          );
          const decision = await verifier.verify(token, options);
          if (claimsAcceptable(claims)) {
            expect(decision).toMatchObject({ ok: true, identity: { clientId: claims.sub } });
          } else {
            expectWellFormedRefusal(decision);
          }
        }),
        params(),
      );
    },
    FUZZ_TIMEOUT_MS,
  );

  test(
    'a signed payload that is not a JSON object, or a header with odd members, is refused',
    async () => {
      const header = fc.record(
        {
          alg: fc.oneof(fc.constant('ES256'), anyJson),
          kid: fc.oneof(fc.constant('k1'), anyJson),
          crit: anyJson,
          b64: anyJson,
        },
        { requiredKeys: [] },
      );
      const payload = fc.oneof(
        anyText(40),
        anyJson.map((j) => JSON.stringify(j)),
      );
      await fc.assert(
        fc.asyncProperty(header, payload, async (h, p) => {
          const token = await signRaw(h, p);
          const decision = await verifier.verify(token, options);
          if (decision.ok) {
            // Only a plain ES256 header with the right key and a JSON object payload can pass.
            expect(h.alg).toBe('ES256');
            expect(claimsAcceptable(JSON.parse(p))).toBe(true);
          } else {
            expectWellFormedRefusal(decision);
          }
        }),
        params(),
      );
    },
    FUZZ_TIMEOUT_MS,
  );

  test(
    'a valid token with any character changed passes only if it decodes to the same bytes',
    async () => {
      const token = await signRaw(
        { alg: 'ES256', kid: 'k1', typ: 'JWT' },
        JSON.stringify({ iss: provider.issuer, sub: 'robot@idp', exp: NOW + 600, iat: NOW }),
      );
      expect((await verifier.verify(token, options)).ok).toBe(true);
      const decoded = (t: string) =>
        t.split('.').map((part) => Buffer.from(part, 'base64url').toString('hex'));
      await fc.assert(
        fc.asyncProperty(
          fc.nat(token.length - 1),
          fc.constantFrom(...'AZaz09-_.=+/ '.split('')),
          async (at, c) => {
            const changed = token.slice(0, at) + c + token.slice(at + 1);
            const decision = await verifier.verify(changed, options);
            if (decision.ok) expect(decoded(changed)).toEqual(decoded(token));
            else expectWellFormedRefusal(decision);
          },
        ),
        params(),
      );
    },
    FUZZ_TIMEOUT_MS,
  );
});
