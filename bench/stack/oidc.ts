import { appendFile } from 'node:fs/promises';
import { startProviderForGateway } from '../../test/support/oidc-gateway-env.js';
import type { TestOidcProvider } from '../../test/support/oidc-provider.js';

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
  const { provider, env } = await startProviderForGateway(dir, [BEARER_CLIENT]);
  // Every caller of the bench is 127.0.0.1, and its phases fail on purpose by the hundred
  // (each revoked key's pollers, the flood): the per-address budget is off, or the revocation
  // phase's new keys met 429 before their DELETE. The per-key-id budget,
  // which the flood row measures, stays on.
  const settings = env.GATEWAY_SETTINGS;
  if (!settings) throw new Error('the provider gave no settings file');
  await appendFile(settings, 'failure_budget:\n  per_address: 0\n');
  return { provider, gatewayEnv: env };
}
