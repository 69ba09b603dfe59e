import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { type JWTPayload, SignJWT } from 'jose';
import { serve } from './serve.js';

export interface TestKey {
  kid: string;
  alg: 'ES256' | 'RS256';
  privateKey: KeyObject;
  jwk: Record<string, unknown>;
}

/** A fresh signing key with its public JWK as a provider would publish it. */
export function makeKey(kid: string, alg: 'ES256' | 'RS256' = 'ES256'): TestKey {
  const { privateKey, publicKey } =
    alg === 'ES256'
      ? generateKeyPairSync('ec', { namedCurve: 'P-256' })
      : generateKeyPairSync('rsa', { modulusLength: 2048 });
  return { kid, alg, privateKey, jwk: { ...publicKey.export({ format: 'jwk' }), kid, use: 'sig' } };
}

/**
 * The smallest OpenID Connect provider the verifier needs: a discovery document and a key set
 * over real HTTP on loopback, both changeable by the test, counting how often each is fetched.
 */
export async function startKeyServer(keys: TestKey[]) {
  const state = {
    keys,
    /** Replaces the discovery document (null: the default one). */
    discovery: null as unknown,
    /** Replaces the key set document (null: `{keys}` from the keys above). */
    jwks: null as unknown,
    hits: { discovery: 0, jwks: 0 },
  };
  const answer = (url: string | undefined): unknown => {
    if (url === '/.well-known/openid-configuration') {
      state.hits.discovery++;
      return state.discovery ?? defaultDiscovery();
    }
    if (url === '/jwks') {
      state.hits.jwks++;
      return state.jwks ?? { keys: state.keys.map((k) => k.jwk) };
    }
    return undefined;
  };
  const server = await serve((req, res) => {
    const body = answer(req.url);
    if (body === undefined) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify(body));
  });
  const issuer = server.url;
  function defaultDiscovery() {
    return {
      issuer,
      jwks_uri: `${server.url}/jwks`,
      id_token_signing_alg_values_supported: ['ES256', 'RS256'],
    };
  }
  return {
    state,
    issuer,
    discoveryUrl: `${server.url}/.well-known/openid-configuration`,
    close: server.close,
    /** A token signed by `key` (default: the first), with `iss` and a 10-minute lifetime at `nowSeconds`. */
    async sign(
      claims: JWTPayload,
      nowSeconds: number,
      options: { key?: TestKey; header?: Record<string, unknown> } = {},
    ): Promise<string> {
      const key = options.key ?? state.keys[0]!;
      return await new SignJWT({ iss: issuer, iat: nowSeconds, exp: nowSeconds + 600, ...claims })
        .setProtectedHeader({ alg: key.alg, kid: key.kid, typ: 'JWT', ...options.header })
        .sign(key.privateKey);
    },
  };
}
