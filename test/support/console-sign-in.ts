/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
// The functions passed to page.evaluate and waitForFunction run in the browser: DOM types.
import { expect, test } from 'vitest';
import { CONSOLE_CLIENT, type ConsoleSteps } from './console-steps.js';
import { CLIENTS, uniqueName } from './management.js';
import { apk } from './sidecar.js';

/**
 * How an operator signs in to the console (issue 14): its files and settings, key sign-in and
 * what happens to a refused key, where the key travels, and OpenID Connect sign-in with PKCE
 * through the test's provider.
 * Run inside consoleSuite, against its gateway and provider.
 */
export function consoleSignInTests(steps: ConsoleSteps): void {
  const {
    stack,
    browser,
    provider,
    call,
    createWithKey,
    open,
    shot,
    heading,
    signInWithKey,
    rowAction,
    seeAll,
    createAndClose,
    signInWithProvider,
  } = steps;

  test('its files are public with a strict CSP; config.json says what sign-in offers; nothing else opens', async () => {
    const index = await call('/console/');
    expect(index.status).toBe(200);
    expect(index.headers['content-type']).toMatch(/^text\/html/);
    const csp = String(index.headers['content-security-policy']);
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    // The provider's origin only where the browser talks to it (OpenID Connect sign-in).
    expect(csp).toContain(
      provider()
        ? `connect-src 'self' ${new URL(provider().issuer).origin};`
        : "connect-src 'self' ;",
    );
    // No inline script or style, nothing from elsewhere.
    expect(index.text).not.toMatch(/<script(?![^>]*\bsrc=)/);
    expect(index.text).not.toMatch(/style=|<style|https?:\/\//);
    const script = await call('/console/js/main.js');
    expect(script.status).toBe(200);
    expect(script.headers['content-type']).toMatch(/^text\/javascript/);
    const lit = await call('/console/vendor/lit-html.js');
    expect(lit.status).toBe(200);
    const config = await call('/console/config.json');
    expect(config.headers['content-type']).toBe('application/json');
    expect(config.json).toEqual({
      api_keys: true,
      oidc: {
        discovery: provider().discoveryUrl,
        client_id: CONSOLE_CLIENT,
        scope: 'openid api',
        redirect_uri: '',
      },
    });
    expect((await call('/console/', { method: 'POST' })).status).toBe(405);
    // The exception is the console's files only: management and the app still need a key.
    expect((await call(CLIENTS)).status).toBe(401);
    expect((await call('/console')).status).toBe(401);
    expect((await call('/api')).status).toBe(401);
  });

  test('its settings read again after a network failure: OpenID Connect sign-in is still offered', async () => {
    const page = await open(2);
    await page.waitForSelector('#oidc-sign-in');
    expect(await page.$('#key-sign-in')).not.toBeNull();
    expect(await page.$('#message')).toBeNull();
    const reads = browser().requests.filter((r) => r.url.endsWith('/console/config.json'));
    expect(reads).toHaveLength(3);
  });

  test('its settings unreadable: key sign-in is offered, and the console says why', async () => {
    const page = await open(3);
    await page.waitForSelector('#message.error');
    expect(await page.$eval('#message', (m) => m.textContent)).toMatch(
      /could not read its settings \(.+\): only key sign-in is offered/,
    );
    expect(await page.$('#key-sign-in')).not.toBeNull();
    expect(await page.$('#oidc-sign-in')).toBeNull();
    // Signing in with a key still works: the API decides.
    await signInWithKey(page, stack().adminKey);
  });

  test('a refused credential (its client deleted) takes the operator back to sign-in', async () => {
    const { token, api_key_id: id } = await createWithKey(uniqueName('console-doomed-admin'), true);
    const page = await open();
    await signInWithKey(page, token);
    expect(
      (await call(`${CLIENTS}/${id}`, { method: 'DELETE', headers: apk(stack().adminKey) })).status,
    ).toBe(200);
    await page.select('#sort', 'name');
    await heading(page, 'Sign in');
    expect(await page.$eval('#message', (m) => m.textContent)).toMatch(/sign in again/);
    expect(await page.evaluate(() => sessionStorage.length)).toBe(0);
  });

  test('the key travels only in the Authorization header: never in a URL, a body, a cookie or localStorage', async () => {
    const page = await open();
    await signInWithKey(page, stack().adminKey);
    const name = uniqueName('console-traced');
    await createAndClose(page, name);
    await seeAll(page);
    await rowAction(page, name, 'edit');
    await page.waitForSelector('#edit-name');
    await page.type('#edit-name', '-renamed');
    await page.click('#panel-edit button[type="submit"]');
    await page.waitForFunction(
      (n) => [...document.querySelectorAll('td.name')].some((td) => td.textContent === n),
      {},
      `${name}-renamed`,
    );
    await rowAction(page, `${name}-renamed`, 'delete');
    await page.click('#confirm-delete');
    await page.waitForFunction(() =>
      /Deleted API client/.test(document.querySelector('#message')?.textContent ?? ''),
    );

    const secret = stack().adminKey.split('.')[1]!;
    const seen = browser().requests;
    const management = seen.filter((r) => new URL(r.url).pathname.startsWith('/v1/management/'));
    expect(management.map((r) => r.method)).toEqual(
      expect.arrayContaining(['GET', 'POST', 'PUT', 'DELETE']),
    );
    for (const r of seen) {
      expect(r.url).not.toContain(secret);
      expect(r.body).not.toContain(secret);
      for (const [header, value] of Object.entries(r.headers)) {
        if (header !== 'authorization') expect(value, header).not.toContain(secret);
      }
    }
    for (const r of management) expect(r.headers.authorization).toBe(`apk ${stack().adminKey}`);
    // The console's files are fetched without it.
    for (const r of seen.filter((x) => new URL(x.url).pathname.startsWith('/console/'))) {
      expect(r.headers.authorization).toBeUndefined();
    }
    expect(await page.cookies()).toEqual([]);
    expect(await page.evaluate(() => localStorage.length)).toBe(0);
    expect(await page.evaluate(() => JSON.stringify(sessionStorage))).toContain(secret);
    await page.click('#sign-out');
    await heading(page, 'Sign in');
    expect(await page.evaluate(() => sessionStorage.length)).toBe(0);
  });

  test('OpenID Connect sign-in: authorization code with PKCE, back to the console, then bearer calls', async () => {
    const page = await open();
    await signInWithProvider(page, true);
    await shot('oidc-signed-in');
    // The code is gone from the address bar.
    expect(page.url()).toBe(`${stack().baseUrl}/console/`);

    const seen = browser().requests;
    const authorize = seen.find((r) => r.url.startsWith(`${provider().issuer}/auth`));
    expect(authorize, seen.map((r) => r.url).join('\n')).toBeDefined();
    const params = new URL(authorize!.url).searchParams;
    expect(params.get('code_challenge_method')).toBe('S256');
    expect(params.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(params.get('redirect_uri')).toBe(`${stack().baseUrl}/console/`);
    expect(params.get('client_id')).toBe(CONSOLE_CLIENT);
    const token = seen.find((r) => r.url === `${provider().issuer}/token`);
    expect(new URLSearchParams(token!.body).get('code_verifier')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const management = seen.filter((r) => new URL(r.url).pathname.startsWith('/v1/management/'));
    expect(management.length).toBeGreaterThan(0);
    for (const r of management) expect(r.headers.authorization).toMatch(/^Bearer ey/);
    expect(await page.$eval('.who', (w) => w.textContent)).toMatch(/OpenID Connect/);
    await page.click('#sign-out');
    await heading(page, 'Sign in');
    expect(await page.evaluate(() => sessionStorage.length)).toBe(0);
  });
}
