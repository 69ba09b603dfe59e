// The container suite's OpenID Connect provider: oidc-provider over HTTPS, configured like
// test/support/oidc-provider.ts (client_credentials grant with a resource indicator: RS256 JWT
// access tokens whose `sub` is the client's id). Environment:
//   ISSUER         https://<its network alias>:<PORT>, what tokens carry in `iss`
//   PORT           8443
//   TLS_CERT_FILE  server certificate (issued by the test's CA for the alias), TLS_KEY_FILE its key
//   CLIENTS        comma-separated client ids; each has the secret `secret-<id>`
//   RESOURCE       the audience of access tokens (https://api.gateway.test)
// It logs one line per request (`GET /jwks from 10.89.0.5`), which the test reads.
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:https';
import Provider from 'oidc-provider';

const env = (name, fallback) => {
  const value = process.env[name] ?? fallback;
  if (value === undefined) throw new Error(`${name} is required`);
  return value;
};
const issuer = env('ISSUER');
const port = Number(env('PORT', '8443'));
const resource = env('RESOURCE', 'https://api.gateway.test');
const clients = env('CLIENTS')
  .split(',')
  .map((id) => id.trim())
  .filter(Boolean);

const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const kid = `key-${randomBytes(6).toString('hex')}`;

const provider = new Provider(issuer, {
  clients: clients.map((id) => ({
    client_id: id,
    client_secret: `secret-${id}`,
    grant_types: ['client_credentials'],
    redirect_uris: [],
    response_types: [],
    token_endpoint_auth_method: 'client_secret_post',
  })),
  jwks: { keys: [{ ...privateKey.export({ format: 'jwk' }), kid, use: 'sig' }] },
  enabledJWA: { idTokenSigningAlgValues: ['RS256'] },
  cookies: { keys: [randomBytes(16).toString('hex')] },
  ttl: { ClientCredentials: 600 },
  features: {
    devInteractions: { enabled: false },
    clientCredentials: { enabled: true },
    resourceIndicators: {
      enabled: true,
      defaultResource: () => resource,
      useGrantedResource: () => true,
      getResourceServerInfo: () => ({
        scope: 'api',
        audience: resource,
        accessTokenFormat: 'jwt',
        accessTokenTTL: 600,
        jwt: { sign: { alg: 'RS256' } },
      }),
    },
  },
});
const handler = provider.callback();

const server = createServer(
  { cert: readFileSync(env('TLS_CERT_FILE')), key: readFileSync(env('TLS_KEY_FILE')) },
  (req, res) => {
    console.log(
      `${req.method} ${(req.url ?? '').split('?', 1)[0]} from ${req.socket.remoteAddress}`,
    );
    handler(req, res);
  },
);
server.listen(port, '0.0.0.0', () => console.log(`oidc provider ${issuer} listening on ${port}`));
for (const signal of ['SIGTERM', 'SIGINT'])
  process.on(signal, () => server.close(() => process.exit(0)));
