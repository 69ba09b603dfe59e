import { createSign, KeyObject } from 'node:crypto';
import fc from 'fast-check';
import { importJWK, jwtVerify } from 'jose';
import { describe, expect, test } from 'vitest';
import { checkClaims } from '../../sidecar/oidc/claims.js';
import { readHeader, verifyJws } from '../../sidecar/oidc/jws.js';
import { makeKey } from '../unit/support/key-server.js';
import { anyJson, anyText, FUZZ_TIMEOUT_MS, params } from './runs.js';

// jws.ts and claims.ts replaced jose's jwtVerify on the bearer path (synchronous, no thread
// pool). jose stays the reference: on any token, signed or not, tampered or not, both give the
// same answer with the same X-jwt-error text. Where this project is stricter by design
// (base64url with '=' padding or whitespace, RFC 7515 §2), only "we accept ⇒ jose accepts"
// is asserted.

const NOW = 1_800_000_000;
const TOLERANCE = 30;
const ISSUER = 'https://idp.example';
const key = makeKey('k1');
const stranger = makeKey('k1');

const b64 = (text: string) => Buffer.from(text).toString('base64url');

function signRaw(header: Record<string, unknown>, payload: string, by = key): string {
  const signingInput = `${b64(JSON.stringify(header))}.${b64(payload)}`;
  const signature = createSign('SHA256')
    .update(signingInput)
    .sign({ key: by.privateKey, dsaEncoding: 'ieee-p1363' });
  return `${signingInput}.${signature.toString('base64url')}`;
}

const cryptoKey = importJWK(key.jwk, 'ES256') as Promise<CryptoKey>;

/** Ours: what the verifier does once the key is found. */
async function ours(token: string, audience: string | null): Promise<string> {
  const header = readHeader(token);
  if (header === null) return 'unreadable header';
  const signed = verifyJws(token, header, 'ES256', [KeyObject.from(await cryptoKey)]);
  if (!signed.ok) return signed.reason;
  const claims = checkClaims(signed.payload, {
    issuer: ISSUER,
    audience,
    toleranceSeconds: TOLERANCE,
    nowMs: NOW * 1000,
  });
  return claims.ok ? `accepted ${JSON.stringify(claims.claims)}` : claims.reason;
}

/**
 * The texts the verifier gave jose's errors (sidecar/oidc/token-errors.ts before jws.ts and
 * claims.ts), kept here as the reference the new code must match.
 */
function joseText(err: unknown): string {
  const { code, claim, reason, message } = err as Record<string, unknown>;
  switch (code) {
    case 'ERR_JWT_EXPIRED':
      return 'token expired';
    case 'ERR_JWT_CLAIM_VALIDATION_FAILED':
      if (reason === 'missing') return `missing required ${JSON.stringify(claim)} claim`;
      if (claim === 'nbf') return 'token not yet valid';
      if (claim === 'iss') return 'unexpected "iss" claim value';
      if (claim === 'aud') return 'unexpected "aud" claim value';
      return String(message);
    case 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED':
      return 'signature verification failed';
    case 'ERR_JWS_INVALID':
    case 'ERR_JWT_INVALID':
      return `malformed token (${String(message)})`;
    case 'ERR_JOSE_ALG_NOT_ALLOWED':
      return 'unsupported algorithm';
    case 'ERR_JOSE_NOT_SUPPORTED':
      return `unsupported token (${String(message)})`;
    default:
      return `fault: ${String(message)}`;
  }
}

/** jose's jwtVerify with the options the verifier used to pass, then its own `iat` check. */
async function jose(token: string, audience: string | null): Promise<string> {
  try {
    const { payload } = await jwtVerify(token, await cryptoKey, {
      algorithms: ['ES256'],
      issuer: ISSUER,
      ...(audience !== null ? { audience } : {}),
      clockTolerance: TOLERANCE,
      currentDate: new Date(NOW * 1000),
      requiredClaims: ['exp'],
    });
    if ((payload.iat ?? 0) > NOW + TOLERANCE) return 'token issued in the future ("iat")';
    return `accepted ${JSON.stringify(payload)}`;
  } catch (err) {
    return joseText(err);
  }
}

async function expectSame(token: string, audience: string | null) {
  const theirs = await jose(token, audience);
  const mine = await ours(token, audience);
  // An unreadable header is refused before anything else; jose refuses it too.
  if (mine === 'unreadable header') expect(theirs).not.toMatch(/^accepted/);
  // Another alg: the verifier refuses it, or looks for that algorithm's keys, before either.
  else if (readHeader(token)?.alg !== 'ES256') expect(theirs).not.toMatch(/^accepted/);
  else expect(mine).toBe(theirs);
}

const claimValue = fc.oneof(
  fc.constant(undefined),
  fc.integer({ min: NOW - 100, max: NOW + 100 }),
  fc.double({ min: NOW - 100, max: NOW + 100, noNaN: true }),
  anyJson,
);
const claimsArb = fc.record(
  {
    iss: fc.oneof(fc.constant(ISSUER), anyText(20), anyJson),
    exp: claimValue,
    nbf: claimValue,
    iat: claimValue,
    sub: fc.oneof(fc.constant('robot@idp'), anyJson),
    aud: fc.oneof(
      fc.constantFrom('gateway', 'other'),
      fc.array(fc.constantFrom('gateway', 'x')),
      anyJson,
    ),
  },
  { requiredKeys: [] },
);
const headerArb = fc.record(
  {
    alg: fc.constant('ES256'),
    kid: fc.oneof(fc.constant('k1'), anyJson),
    typ: fc.oneof(fc.constant('JWT'), anyJson),
    crit: fc.oneof(fc.constant(['b64']), fc.array(fc.constantFrom('b64', 'exp', '')), anyJson),
    b64: fc.oneof(fc.boolean(), anyJson),
  },
  { requiredKeys: ['alg'] },
);
const audienceArb = fc.constantFrom(null, 'gateway');

describe('our JWT checks agree with jose', () => {
  test(
    'signed tokens: any header, any claims, either key, with or without an audience',
    async () => {
      await fc.assert(
        fc.asyncProperty(
          headerArb,
          fc.oneof(
            claimsArb.map((c) => JSON.stringify(c)),
            anyJson.map((j) => JSON.stringify(j)),
            anyText(40),
          ),
          fc.boolean(),
          audienceArb,
          async (header, payload, right, audience) => {
            await expectSame(signRaw(header, payload, right ? key : stranger), audience);
          },
        ),
        params(),
      );
    },
    FUZZ_TIMEOUT_MS,
  );

  test(
    'a good token with one character changed to another base64url character, or a dot',
    async () => {
      const token = signRaw(
        { alg: 'ES256', kid: 'k1', typ: 'JWT' },
        JSON.stringify({ iss: ISSUER, sub: 'robot@idp', exp: NOW + 600, iat: NOW }),
      );
      expect(await ours(token, null)).toMatch(/^accepted/);
      await fc.assert(
        fc.asyncProperty(
          fc.nat(token.length - 1),
          fc.constantFrom(...'AZaz09-_.'.split('')),
          audienceArb,
          async (at, c, audience) => {
            const changed = token.slice(0, at) + c + token.slice(at + 1);
            if (changed.split('.').length !== 3) return; // the verifier refuses those unread
            await expectSame(changed, audience);
          },
        ),
        params(),
      );
    },
    FUZZ_TIMEOUT_MS,
  );

  test(
    'characters outside base64url: we are stricter, never laxer',
    async () => {
      const token = signRaw(
        { alg: 'ES256', kid: 'k1' },
        JSON.stringify({ iss: ISSUER, sub: 'robot@idp', exp: NOW + 600 }),
      );
      await fc.assert(
        fc.asyncProperty(
          fc.nat(token.length),
          fc.constantFrom(...'=+/ \t\n%é'.split('')),
          async (at, c) => {
            const changed = token.slice(0, at) + c + token.slice(at);
            if (changed.split('.').length !== 3) return;
            const mine = await ours(changed, null);
            if (mine.startsWith('accepted')) expect(await jose(changed, null)).toBe(mine);
          },
        ),
        params(),
      );
      // The documented difference: a padded signature is accepted by jose, refused by us.
      expect(token.split('.')[2]!.length % 4).toBe(2); // 64 bytes: 86 characters
      const padded = `${token}==`;
      expect(await jose(padded, null)).toMatch(/^accepted/);
      expect(await ours(padded, null)).toBe(
        'malformed token (Failed to base64url decode the signature)',
      );
    },
    FUZZ_TIMEOUT_MS,
  );
});
