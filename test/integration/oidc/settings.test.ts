import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { freshDatabase } from '../../support/database.js';
import { startOidcSidecar } from '../../support/oidc-sidecar.js';

// A bad OIDC_* variable stops the sidecar at start-up rather than quietly weakening a check.
let databaseUrl: string;
let dir: string;
beforeAll(async () => {
  databaseUrl = await freshDatabase();
  dir = mkdtempSync(join(tmpdir(), 'gw-oidc-settings-'));
  writeFileSync(join(dir, 'empty.pem'), 'no certificate here\n');
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test.each([
  [{ OIDC_CLOCK_TOLERANCE_SECONDS: 'ten' }, /OIDC_CLOCK_TOLERANCE_SECONDS must be a whole number/],
  [{ OIDC_CLOCK_TOLERANCE_SECONDS: '301' }, /from 0 to 300/],
  [{ OIDC_HTTP_TIMEOUT_MS: '-1' }, /OIDC_HTTP_TIMEOUT_MS must be/],
  [{ OIDC_JWKS_COOLDOWN_SECONDS: '1.5' }, /OIDC_JWKS_COOLDOWN_SECONDS must be/],
  [{ OIDC_CACHE_MAX_AGE_SECONDS: 'forever' }, /OIDC_CACHE_MAX_AGE_SECONDS must be/],
  [{ OIDC_MAX_STALE_SECONDS: '999999999' }, /OIDC_MAX_STALE_SECONDS must be/],
  [{ OIDC_CA_FILE: '/nonexistent/ca.pem' }, /OIDC_CA_FILE cannot be read/],
  [() => ({ OIDC_CA_FILE: join(dir, 'empty.pem') }), /holds no PEM certificate/],
])('%o refuses to start', async (env, message) => {
  const vars = typeof env === 'function' ? env() : env;
  await expect(startOidcSidecar(databaseUrl, vars)).rejects.toThrow(message);
});
