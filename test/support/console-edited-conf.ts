import { expect, test } from 'vitest';
import type { ConsoleSteps } from './console-steps.js';
import { apk } from './sidecar.js';

/**
 * The console after an operator edits default.conf and restarts the stack: last in the
 * suite, since each restart changes what the tests before them read.
 * Run inside consoleSuite, against its gateway and provider.
 */
export function consoleEditedConfTests(steps: ConsoleSteps): void {
  const { stack, provider, call, open, signInWithProvider, editDefaultConf, requestTo } = steps;

  test('OpenID Connect sign-in returns to the redirect_uri set in default.conf', async () => {
    const target = `${stack().baseUrl}/console/index.html`;
    await editDefaultConf('oidc_redirect_uri', `"${target}"`);
    await stack().restart();
    const config = await call('/console/config.json');
    expect((config.json as { oidc: { redirect_uri: string } }).oidc.redirect_uri).toBe(target);
    const page = await open();
    await signInWithProvider(page);
    expect(page.url()).toBe(target);
    const authorize = requestTo(`${provider().issuer}/auth`);
    expect(new URL(authorize!.url).searchParams.get('redirect_uri')).toBe(target);
    const token = requestTo(`${provider().issuer}/token`);
    expect(new URLSearchParams(token!.body).get('redirect_uri')).toBe(target);
  }, 180_000);

  test('switched off in default.conf, /console/ is authenticated like any path', async () => {
    await editDefaultConf('console_enabled', 'false');
    await stack().restart();
    expect((await call('/console/')).status).toBe(401);
    expect((await call('/console/config.json')).status).toBe(401);
    // With a key the request reaches the app, which has no such page: not the console.
    const through = await call('/console/', { headers: apk(stack().adminKey) });
    expect(through.status).not.toBe(401);
    expect(through.text).not.toContain('Gateway console');
  }, 180_000);
}
