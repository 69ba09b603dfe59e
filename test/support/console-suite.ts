import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect } from 'vitest';
import { consoleAuditTests } from './console-audit.js';
import { consoleClientTests } from './console-clients.js';
import { consoleEditedConfTests } from './console-edited-conf.js';
import { consolePermissionsTests } from './console-permissions.js';
import { consoleSignInTests } from './console-sign-in.js';
import { CONSOLE_CLIENT, type ConsoleRun, consoleSteps, OPERATOR } from './console-steps.js';
import { CLIENTS } from './management.js';
import { TestOidcProvider } from './oidc-provider.js';
import { createTestPki } from './oidc-tls.js';
import { apk } from './sidecar.js';
import type { Stack } from './stack.js';

/** What the suite hands to `start`: a gateway configured for the provider, two ways. */
export interface ConsoleStackEnv {
  /** GATEWAY_SETTINGS (both methods on, the provider, the console's client) and OIDC_CA_FILE. */
  env: Record<string, string>;
  /** The provider's CA (PEM, world-readable), for a stack that mounts it. */
  caFile: string;
  /** The same settings as `set` lines of default.conf (name without `$` → value), for a stack configured by editing it. */
  defaultConf: Record<string, string>;
}

/** Where the test's provider listens and the name it is reached by (its issuer's host). */
export interface ConsoleSuiteOptions {
  providerName?: string;
  providerListen?: string;
}

/**
 * Issue 14's acceptance in a real headless browser (Debian's chromium through puppeteer-core)
 * against a whole gateway: the console's files, key sign-in, create / use / rotate / delete,
 * the audit trail, OpenID Connect sign-in with PKCE through a real provider, the XSS name,
 * and where the credential travels. Screenshots go to test-artifacts/console/. The tests are
 * grouped by screen in test/support/console-*.ts; the steps they share are console-steps.ts.
 */
export function consoleSuite(
  start: (oidc: ConsoleStackEnv) => Promise<Stack>,
  { providerName = '127.0.0.1', providerListen = '127.0.0.1' }: ConsoleSuiteOptions = {},
): void {
  // Filled by beforeAll; the steps read it at each call.
  const run = { providerName, browser: null } as unknown as ConsoleRun;
  const steps = consoleSteps(run);
  let scratch: string;

  beforeAll(async () => {
    scratch = await mkdtemp(join(tmpdir(), 'gw-console-'));
    const pki = createTestPki(providerName === '127.0.0.1' ? undefined : providerName);
    const caFile = join(scratch, 'provider-ca.pem');
    await writeFile(caFile, pki.caPem, { mode: 0o644 });
    const provider = await TestOidcProvider.start(pki, [], {
      name: providerName,
      listen: providerListen,
    });
    const settings = join(scratch, 'gateway.yaml');
    await writeFile(
      settings,
      [
        'api_keys_enabled: true',
        'open_id_connect_enabled: true',
        'open_id_connect:',
        `  discovery: ${provider.discoveryUrl}`,
        'console:',
        `  oidc_client_id: ${CONSOLE_CLIENT}`,
        // "api" makes the provider issue a JWT access token for the gateway's resource.
        '  oidc_scope: openid api',
        '',
      ].join('\n'),
    );
    run.provider = provider;
    const stack = await start({
      // Usage counts reach PostgreSQL within seconds (the detail view's chart shows them).
      env: { GATEWAY_SETTINGS: settings, OIDC_CA_FILE: caFile, USAGE_FLUSH_MS: '500' },
      caFile,
      defaultConf: {
        open_id_connect_enabled: 'true',
        oidc_discovery: `"${provider.discoveryUrl}"`,
        console_oidc_client_id: `"${CONSOLE_CLIENT}"`,
        console_oidc_scope: '"openid api"',
      },
    });
    // Empty redirect_uri in default.conf: the provider returns to the console's own address.
    provider.allowBrowserClient(CONSOLE_CLIENT, [
      `${stack.baseUrl}/console/`,
      `${stack.baseUrl}/console/index.html`,
    ]);
    run.stack = stack;
    const res = await steps.call(CLIENTS, {
      method: 'POST',
      headers: apk(stack.adminKey),
      json: {
        name: 'console operator',
        is_admin: true,
        generate_api_key: false,
        api_client_id: OPERATOR,
      },
    });
    expect(res.status, res.text).toBe(201);
  }, 240_000);
  afterEach(async () => {
    await run.browser?.close();
    run.browser = null;
  });
  afterAll(async () => {
    await run.stack?.close();
    await run.provider?.stop();
    if (scratch) await rm(scratch, { recursive: true, force: true });
  }, 120_000);

  describe('the console (issue 14)', () => {
    consoleSignInTests(steps);
    consoleClientTests(steps);
    consolePermissionsTests(steps);
    consoleAuditTests(steps);
    consoleEditedConfTests(steps);
  });
}
