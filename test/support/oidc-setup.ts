import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { HttpResponse } from './http.js';
import { createClient, uniqueName } from './management.js';
import { TestOidcProvider } from './oidc-provider.js';
import {
  authWithBearer,
  type NginxOidcHeaders,
  type OidcTestSidecar,
  startOidcSidecar,
} from './oidc-sidecar.js';
import { createTestPki, type TestPki } from './oidc-tls.js';

/** A provider, its test CA written to a file, and a sidecar that trusts it (OIDC_CA_FILE). */
export interface OidcSetup {
  pki: TestPki;
  caFile: string;
  provider: TestOidcProvider;
  sidecar: OidcTestSidecar;
  /** `/auth` of this setup's sidecar with a bearer token and nginx's headers. */
  auth(
    token: string,
    overrides?: NginxOidcHeaders,
    sidecar?: OidcTestSidecar,
  ): Promise<HttpResponse>;
  /** An API client without key whose `api_client_id` is `apiClientId` (spec 5.3.5). */
  addClient(apiClientId: string, options?: { isAdmin?: boolean; name?: string }): Promise<number>;
  close(): Promise<void>;
}

export async function startOidcSetup(
  databaseUrl: string,
  clients: string[],
  sidecarEnv: Record<string, string> = {},
): Promise<OidcSetup> {
  const pki = createTestPki();
  const dir = mkdtempSync(join(tmpdir(), 'gw-oidc-'));
  const caFile = join(dir, 'provider-ca.pem');
  writeFileSync(caFile, pki.caPem);
  const provider = await TestOidcProvider.start(pki, clients);
  const sidecar = await startOidcSidecar(databaseUrl, { OIDC_CA_FILE: caFile, ...sidecarEnv });
  return {
    pki,
    caFile,
    provider,
    sidecar,
    auth: (token, overrides = {}, other = sidecar) =>
      authWithBearer(other.url, provider.discoveryUrl, token, overrides),
    async addClient(apiClientId, { isAdmin = false, name = uniqueName(apiClientId) } = {}) {
      const created = await createClient(sidecar.url, sidecar.adminKey, {
        name,
        is_admin: isAdmin,
        generate_api_key: false,
        api_client_id: apiClientId,
      });
      return created.id;
    },
    async close() {
      await sidecar.close();
      await provider.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
