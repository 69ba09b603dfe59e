import { generateKeyPairSync, type KeyObject, randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { type JWK, type JWTPayload, SignJWT } from 'jose';
import Provider from 'oidc-provider';
import { http } from './http.js';
import type { TestPki } from './oidc-tls.js';

/** The resource (API) the provider issues JWT access tokens for: their `aud`. */
export const RESOURCE = 'https://api.gateway.test';

export interface SigningKey {
  kid: string;
  privateKey: KeyObject;
  /** The private JWK as the provider holds it; its public part is what /jwks shows. */
  jwk: JWK;
}

/** Requests the provider answered, by kind: how the tests see what the sidecar fetched. */
export interface ProviderHits {
  discovery: number;
  jwks: number;
}

function newRsaKey(): SigningKey {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const kid = `key-${randomBytes(6).toString('hex')}`;
  // No `alg` on the JWK: the same RSA key can then sign RS256 and PS256, which lets a test
  // show that an algorithm the provider does not advertise is refused for policy alone.
  return { kid, privateKey, jwk: { ...privateKey.export({ format: 'jwk' }), kid, use: 'sig' } };
}

/**
 * A real OpenID Connect provider (`oidc-provider`) over HTTPS on loopback, with a certificate
 * from a test CA. Clients use the client_credentials grant with a resource indicator, which
 * gives RS256-signed JWT access tokens with `sub` = `client_id` = the client's id.
 */
export class TestOidcProvider {
  readonly hits: ProviderHits = { discovery: 0, jwks: 0 };
  /** Newest first: the first key signs, all are published. */
  readonly keys: SigningKey[] = [newRsaKey()];
  private handler: ReturnType<Provider['callback']>;
  /** Public clients signing in a person (authorization code + PKCE), e.g. the console. */
  private browserClients: Array<{ clientId: string; redirectUris: string[] }> = [];

  private constructor(
    private readonly server: Server,
    readonly issuer: string,
    private readonly clients: string[],
    private readonly pki: TestPki,
  ) {
    this.handler = this.build().callback();
  }

  /**
   * Starts a provider that knows `clients` (each with the secret `secret-<id>`). By default on
   * loopback as `https://127.0.0.1:<port>`; `name` and `listen` serve it under another name on
   * another address (e.g. `host.containers.internal` on every interface, for containers).
   */
  static async start(
    pki: TestPki,
    clients: string[],
    { name = '127.0.0.1', listen = '127.0.0.1' }: { name?: string; listen?: string } = {},
  ): Promise<TestOidcProvider> {
    let provider: TestOidcProvider | null = null;
    const server = createServer({ key: pki.serverKeyPem, cert: pki.serverCertPem }, (req, res) => {
      if (!provider) {
        res.writeHead(503).end();
        return;
      }
      const path = (req.url ?? '').split('?', 1)[0];
      if (path === '/jwks') provider.hits.jwks += 1;
      if (path === '/.well-known/openid-configuration') provider.hits.discovery += 1;
      provider.handler(req, res);
    });
    await new Promise<void>((resolve) => server.listen(0, listen, resolve));
    const { port } = server.address() as AddressInfo;
    provider = new TestOidcProvider(server, `https://${name}:${port}`, clients, pki);
    return provider;
  }

  get discoveryUrl(): string {
    return `${this.issuer}/.well-known/openid-configuration`;
  }

  get signingKey(): SigningKey {
    return this.keys[0]!;
  }

  /** A provider-issued access token (client_credentials grant), as a real client gets it. */
  async issueToken(clientId: string): Promise<string> {
    const body = new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: clientId,
      client_secret: `secret-${clientId}`,
      scope: 'api',
      resource: RESOURCE,
    }).toString();
    const res = await http(`${this.issuer}/token`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body,
      tls: { ca: this.pki.caPem },
    });
    if (res.status !== 200) throw new Error(`token request failed: ${res.status} ${res.text}`);
    return (res.json as { access_token: string }).access_token;
  }

  /**
   * A hand-signed token with the provider's own private key, for what the provider will not
   * issue (expired, not yet valid, other issuer, other algorithm). Defaults: RS256, the
   * current key, `iss` = the issuer, issued now, valid ten minutes.
   */
  async sign(
    claims: JWTPayload,
    { alg = 'RS256', key = this.signingKey }: { alg?: string; key?: SigningKey } = {},
  ): Promise<string> {
    const now = Math.floor(Date.now() / 1000);
    return await new SignJWT({ iss: this.issuer, iat: now, exp: now + 600, ...claims })
      .setProtectedHeader({ alg, kid: key.kid, typ: 'JWT' })
      .sign(key.privateKey);
  }

  /**
   * Rotates the signing key as an operator would: the provider restarts its configuration
   * with a new key first (it signs from now on) and the old one still published.
   */
  rotate(): SigningKey {
    this.keys.unshift(newRsaKey());
    this.handler = this.build().callback();
    return this.signingKey;
  }

  /**
   * Registers a public client for a browser sign-in (authorization code with PKCE, no secret)
   * and turns on the provider's development login pages, where any login is accepted: the
   * login becomes the token's `sub`.
   */
  allowBrowserClient(clientId: string, redirectUris: string[]): void {
    this.browserClients.push({ clientId, redirectUris });
    this.handler = this.build().callback();
  }

  /** Stops publishing the oldest key, as an operator does once its tokens have expired. */
  retireOldestKey(): void {
    if (this.keys.length < 2) throw new Error('the provider needs a key to sign with');
    this.keys.pop();
    this.handler = this.build().callback();
  }

  /** Stops answering: open connections are cut, the port is closed. */
  async stop(): Promise<void> {
    await new Promise<void>((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }

  private build(): Provider {
    const provider = new Provider(this.issuer, {
      clients: [
        ...this.clients.map((id) => ({
          client_id: id,
          client_secret: `secret-${id}`,
          grant_types: ['client_credentials'],
          redirect_uris: [],
          response_types: [],
          token_endpoint_auth_method: 'client_secret_post',
        })),
        ...this.browserClients.map(({ clientId, redirectUris }) => ({
          client_id: clientId,
          grant_types: ['authorization_code'],
          redirect_uris: redirectUris,
          response_types: ['code'],
          token_endpoint_auth_method: 'none',
        })),
      ],
      jwks: { keys: this.keys.map((k) => k.jwk) },
      // What discovery advertises in id_token_signing_alg_values_supported.
      enabledJWA: { idTokenSigningAlgValues: ['RS256'] },
      cookies: { keys: [randomBytes(16).toString('hex')] },
      ttl: { ClientCredentials: 600 },
      features: {
        devInteractions: { enabled: this.browserClients.length > 0 },
        clientCredentials: { enabled: true },
        resourceIndicators: {
          enabled: true,
          defaultResource: () => RESOURCE,
          useGrantedResource: () => true,
          getResourceServerInfo: () => ({
            scope: 'api',
            audience: RESOURCE,
            accessTokenFormat: 'jwt',
            accessTokenTTL: 600,
            jwt: { sign: { alg: 'RS256' } },
          }),
        },
      },
    });
    return provider;
  }
}
