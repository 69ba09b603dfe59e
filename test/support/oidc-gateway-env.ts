import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { TestOidcProvider } from './oidc-provider.js';
import { createTestPki } from './oidc-tls.js';

export interface ProviderForGateway {
  provider: TestOidcProvider;
  /** The provider's test CA (PEM file), for `OIDC_CA_FILE`. */
  caFile: string;
  /** A gateway's environment: both methods on (settings file), the provider's CA trusted. */
  env: Record<string, string>;
}

/**
 * A real OpenID Connect provider (HTTPS, throw-away CA) and the environment of a native
 * gateway configured for it as an operator does it: a settings file read when `default.conf`
 * is first written, with API keys on too so the bootstrap key can create the token clients.
 */
export async function startProviderForGateway(
  dir: string,
  clients: string[],
): Promise<ProviderForGateway> {
  const pki = createTestPki();
  const caFile = join(dir, 'provider-ca.pem');
  await writeFile(caFile, pki.caPem);
  const provider = await TestOidcProvider.start(pki, clients);
  const settings = join(dir, 'gateway.yaml');
  await writeFile(
    settings,
    [
      'api_keys_enabled: true',
      'open_id_connect_enabled: true',
      'open_id_connect:',
      `  discovery: ${provider.discoveryUrl}`,
      '  ssl_verify: "yes"',
      '',
    ].join('\n'),
  );
  return { provider, caFile, env: { GATEWAY_SETTINGS: settings, OIDC_CA_FILE: caFile } };
}
