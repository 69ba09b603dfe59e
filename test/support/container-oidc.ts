import { type StartedTestContainer, Wait } from 'testcontainers';
import { freePort } from '../../native/ports.js';
import { containerLogs, IMAGES, TestContainer, testLabels } from './container-engine.js';
import { http } from './http.js';
import { createTestPki } from './oidc-tls.js';

export interface ProviderContainer {
  /** `https://<alias>:8443`: what the gateway's sidecar reaches on the network, and `iss`. */
  issuer: string;
  discoveryUrl: string;
  caPem: string;
  container: StartedTestContainer;
  /** An access token from the provider's token endpoint (client_credentials), as a client gets it. */
  issueToken(clientId: string): Promise<string>;
  /** The provider's request log (`GET /jwks from 10.89.0.5`). */
  logs(): Promise<string>;
}

/**
 * The test image (test/containers/oidc-provider/) on `network` under the name `alias`, with a
 * certificate for that name from a fresh CA. The test reaches its token endpoint through a
 * port on loopback, with the alias as TLS server name.
 */
export async function startProviderContainer(options: {
  network: string;
  alias: string;
  clients: string[];
  /** Extra labels (e.g. the test's, so that its clean-up finds the provider too). */
  labels?: Record<string, string>;
}): Promise<ProviderContainer> {
  const pki = createTestPki(options.alias);
  const issuer = `https://${options.alias}:8443`;
  const port = await freePort();
  const container = await new TestContainer(IMAGES.oidcProvider)
    .withNetworkMode(options.network)
    .withNetworkAliases(options.alias)
    .withLabels(testLabels({ ...options.labels, 'gw.test.service': 'oidc-provider' }))
    .withEnvironment({
      ISSUER: issuer,
      PORT: '8443',
      TLS_CERT_FILE: '/provider/tls/server.crt',
      TLS_KEY_FILE: '/provider/tls/server.key',
      CLIENTS: options.clients.join(','),
    })
    .withCopyContentToContainer([
      { content: pki.serverCertPem, target: '/provider/tls/server.crt', mode: 0o644 },
      { content: pki.serverKeyPem, target: '/provider/tls/server.key', mode: 0o644 },
    ])
    .withLoopbackPort(8443, port)
    .withStartupTimeout(30_000)
    .withWaitStrategy(Wait.forLogMessage(/listening on 8443/))
    .start();
  return {
    issuer,
    discoveryUrl: `${issuer}/.well-known/openid-configuration`,
    caPem: pki.caPem,
    container,
    async issueToken(clientId) {
      const res = await http(`https://${options.alias}:${port}/token`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          grant_type: 'client_credentials',
          client_id: clientId,
          client_secret: `secret-${clientId}`,
          scope: 'api',
          resource: 'https://api.gateway.test',
        }).toString(),
        tls: { ca: pki.caPem, servername: options.alias },
        connectTo: '127.0.0.1',
      });
      if (res.status !== 200) throw new Error(`token request failed: ${res.status} ${res.text}`);
      return (res.json as { access_token: string }).access_token;
    },
    async logs() {
      return await containerLogs(container.getId());
    },
  };
}
