import { createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { type JWTPayload, SignJWT } from 'jose';
import type { TestOidcProvider } from './oidc-provider.js';

const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

/** The payload of a compact JWT, decoded without any check (to read and alter claims). */
export function claimsOf(token: string): JWTPayload {
  return JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8'));
}

/** The same header and signature with a different payload: what a forger would try first. */
export function withPayload(token: string, changes: JWTPayload): string {
  const [header, , signature] = token.split('.');
  return `${header}.${b64({ ...claimsOf(token), ...changes })}.${signature}`;
}

/** One bit of the signature flipped (in its middle, so base64url padding bits are not it). */
export function withFlippedSignatureBit(token: string): string {
  const [header, payload, signature] = token.split('.');
  const bytes = Buffer.from(signature!, 'base64url');
  const middle = Math.floor(bytes.length / 2);
  bytes[middle] = bytes[middle]! ^ 0x01;
  return `${header}.${payload}.${bytes.toString('base64url')}`;
}

/** An unsigned JWT (`alg: none`, empty signature) with the provider's issuer. */
export function unsignedToken(provider: TestOidcProvider, claims: JWTPayload): string {
  const now = Math.floor(Date.now() / 1000);
  const payload = { iss: provider.issuer, iat: now, exp: now + 600, ...claims };
  return `${b64({ alg: 'none', typ: 'JWT' })}.${b64(payload)}.`;
}

/**
 * The algorithm-confusion forgery: HS256 with the provider's *public* key (its PEM, which
 * anyone can get from /jwks) as the HMAC secret, and the provider's `kid`.
 */
export async function hs256WithPublicKey(
  provider: TestOidcProvider,
  claims: JWTPayload,
): Promise<string> {
  const key = provider.signingKey;
  const publicPem = createPublicKey(key.privateKey).export({ type: 'spki', format: 'pem' });
  const now = Math.floor(Date.now() / 1000);
  return await new SignJWT({ iss: provider.issuer, iat: now, exp: now + 600, ...claims })
    .setProtectedHeader({ alg: 'HS256', kid: key.kid, typ: 'JWT' })
    .sign(new TextEncoder().encode(String(publicPem)));
}

let strangerKey: KeyObject | null = null;

/** A well-formed RS256 token signed by a key the provider never had, under `kid`. */
export async function signedByStranger(
  provider: TestOidcProvider,
  claims: JWTPayload,
  kid: string,
): Promise<string> {
  strangerKey ??= generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
  return await provider.sign(claims, { key: { kid, privateKey: strangerKey, jwk: {} } });
}
