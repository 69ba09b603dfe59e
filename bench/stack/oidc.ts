import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { TestOidcProvider } from '../../test/support/oidc-provider.js';
import { createTestPki } from '../../test/support/oidc-tls.js';

/** The OpenID Connect client whose tokens the bearer row presents (token `sub`). */
export const BEARER_CLIENT = 'svc-bench';

export interface BenchOidc {
  provider: TestOidcProvider;
  /** Environment for a gateway that accepts both methods and trusts the provider's test CA. */
  gatewayEnv: Record<string, string>;
}

/**
 * A real OpenID Connect provider (oidc-provider over HTTPS with a throw-away CA, the one the
 * OIDC tests use), and gateway settings that switch bearer tokens on beside API keys, the way
 * an operator configures it: a settings file read when `default.conf` is first written.
 */
export async function startOidc(dir: string): Promise<BenchOidc> {
  const pki = createTestPki();
  const caFile = join(dir, 'provider-ca.pem');
  await writeFile(caFile, pki.caPem);
  const provider = await TestOidcProvider.start(pki, [BEARER_CLIENT]);
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
  return { provider, gatewayEnv: { GATEWAY_SETTINGS: settings, OIDC_CA_FILE: caFile } };
}
