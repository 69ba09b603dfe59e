/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
// The functions passed to page.evaluate and waitForFunction run in the browser: DOM types.
import { expect, test } from 'vitest';
import type { ConsoleSteps } from './console-steps.js';
import { CLIENTS, uniqueName } from './management.js';
import { apk } from './sidecar.js';

const XSS_NAME = '<img src=x onerror=alert(1)>';

/**
 * The console's client screens (issue 14): create, use and delete a client, its detail view
 * (usage, rate limit, audit events), field errors, a name written like markup, rotation.
 * Run inside consoleSuite, against its gateway and provider.
 */
export function consoleClientTests(steps: ConsoleSteps): void {
  const {
    stack,
    browser,
    call,
    withKey,
    createWithKey,
    open,
    shot,
    heading,
    signInWithKey,
    rowAction,
    createInConsole,
    openAsAdmin,
    createAndClose,
  } = steps;

  test('sign in with a key, sort and filter, create a client whose key works over HTTPS, then delete it', async () => {
    const page = await open();
    await shot('sign-in');
    await signInWithKey(page, stack().adminKey);
    const name = uniqueName('console-created');
    const key = await createInConsole(page, name);
    expect(key).toMatch(/^\d+\.\S+$/);
    expect(await page.$eval('#panel-key .warning', (p) => p.textContent)).toMatch(/only once/);
    await shot('new-key');
    expect((await withKey(key)).status).toBe(200);
    await page.click('#key-done');

    await page.select('#sort', '-id');
    await page.waitForFunction(
      (n) => document.querySelector('tbody tr td.name')?.textContent === n,
      {},
      name,
    );
    // The search asks the API (a name prefix across every client, not this page's rows).
    await page.select('#limit', '10');
    await page.type('#filter', name);
    await page.waitForFunction(() => document.querySelectorAll('tbody tr').length === 1);
    await page.waitForFunction(() =>
      /^1 API clients match$/.test(document.querySelector('.pager .hint')?.textContent ?? ''),
    );
    expect(browser().requests.some((r) => r.url.includes(`name=${encodeURIComponent(name)}`))).toBe(
      true,
    );
    await shot('clients');

    // Keyboard: Escape closes a panel, and focus goes back to where panels open.
    await page.click('#new-client');
    await page.waitForSelector('#create-name');
    await page.keyboard.press('Escape');
    await page.waitForFunction(() => document.querySelector('#panel-create') === null);
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('new-client');

    await rowAction(page, name, 'delete');
    await page.waitForSelector('#confirm-delete');
    await shot('delete-confirmation');
    await page.click('#confirm-delete');
    await page.waitForFunction(() =>
      /Deleted API client/.test(document.querySelector('#message')?.textContent ?? ''),
    );
    expect((await withKey(key)).status).toBe(401);
  });

  test("a client's detail view: its usage chart, its rate limit edited, its audit events; no console error", async () => {
    const name = uniqueName('console-detail');
    const { api_key_id: id, token } = await createWithKey(name);
    for (let i = 0; i < 12; i += 1) expect((await withKey(token)).status).toBe(200);
    // The counts reach PostgreSQL within seconds (nginx, then the sidecar's flush).
    let allowed = 0;
    for (let tries = 0; tries < 150 && allowed < 12; tries += 1) {
      const usage = await call(`${CLIENTS}/${id}/usage?step=minute`, {
        headers: apk(stack().adminKey),
      });
      allowed = (usage.json as { points: { allowed: number }[] }).points.reduce(
        (n, p) => n + p.allowed,
        0,
      );
      if (allowed < 12) await new Promise((r) => setTimeout(r, 200));
    }
    expect(allowed).toBe(12);

    const page = await openAsAdmin();
    // Keyboard: the row's Details button, then Enter.
    await page.waitForSelector(`tr[data-id="${id}"] button[data-action="details"]`);
    await page.focus(`tr[data-id="${id}"] button[data-action="details"]`);
    await page.keyboard.press('Enter');
    await heading(page, name);
    await page.waitForSelector('#usage-chart rect');
    await page.select('#usage-step', 'minute');
    await page.waitForFunction(
      () => document.querySelector('[data-total="allowed"]')?.textContent === '12',
    );
    expect(
      await page.$$eval('#usage-chart rect[data-series="allowed"]', (r) => r.length),
    ).toBeGreaterThan(0);
    expect(await page.$eval('#usage-chart', (svg) => svg.getAttribute('aria-label'))).toMatch(
      /12 allowed, 0 limited, 0 failed/,
    );
    expect(await page.$eval('#detail-created', (dd) => dd.textContent)).toMatch(/\d/);
    expect(await page.$eval('#detail-limit', (dd) => dd.textContent)).toBe('none');

    // The limit, edited: the next request through nginx carries it.
    await page.type('#limit-rate_limit\\.requests', '3');
    await page.type('#limit-rate_limit\\.per_seconds', '60');
    await page.click('#save-limit');
    await page.waitForFunction(
      () => document.querySelector('#detail-limit')?.textContent === '3 per 60 s',
    );
    const limited = await withKey(token);
    expect(limited.headers['ratelimit-policy']).toBe('"client";q=3;w=60');
    // The audit events about it: the create and the update, newest first.
    await page.waitForFunction(
      () => document.querySelectorAll('#detail-events tr[data-action]').length >= 2,
    );
    expect(
      await page.$$eval('#detail-events tr[data-action]', (rows) =>
        rows.map((r) => r.getAttribute('data-action')),
      ),
    ).toEqual(['api_client.update', 'api_client.create']);
    await shot('client-detail');
    // The icon is the console's own (no /favicon.ico refused with 401), and nothing logged an error.
    expect(browser().requests.map((r) => new URL(r.url).pathname)).not.toContain('/favicon.ico');
    expect(browser().consoleLog.filter((l) => /^(error|pageerror)/.test(l))).toEqual([]);
    // A bad value is said next to its field (one the browser's own checks let through).
    await page.$eval('#limit-rate_limit\\.requests', (i) => {
      (i as HTMLInputElement).value = '';
    });
    await page.type('#limit-rate_limit\\.requests', '2000000000');
    await page.click('#save-limit');
    await page.waitForSelector('#limit-rate_limit\\.requests-error', { timeout: 30_000 });
  }, 90_000);

  test('an edit error shows next to its field; a non-admin key is told an admin is needed', async () => {
    const page = await openAsAdmin();
    const name = uniqueName('console-edit');
    await createAndClose(page, name);
    await rowAction(page, name, 'edit');
    await page.waitForSelector('#edit-name');
    // The name of another client: 409 with field "name".
    const taken = uniqueName('console-taken');
    await createWithKey(taken);
    await page.$eval(
      '#edit-name',
      (input, value) => {
        (input as HTMLInputElement).value = value;
      },
      taken,
    );
    await page.click('#panel-edit button[type="submit"]');
    await page.waitForSelector('#edit-name-error');
    expect(await page.$eval('#edit-name-error', (e) => e.textContent)).toMatch(/already exists/);
    expect(await page.$eval('#edit-name', (e) => e.getAttribute('aria-invalid'))).toBe('true');
    await shot('field-error');

    const plain = await createWithKey(uniqueName('console-not-admin'));
    await page.click('#sign-out');
    await page.type('#api-key', plain.token);
    await page.click('#key-sign-in button[type="submit"]');
    await page.waitForFunction(() =>
      /admin credential is needed/.test(document.querySelector('#message')?.textContent ?? ''),
    );
    expect(await page.evaluate(() => sessionStorage.length)).toBe(0);
  });

  test('a client named like markup is shown as text, and nothing runs', async () => {
    await createWithKey(XSS_NAME);
    const page = await openAsAdmin();
    await page.type('#filter', '<img');
    await page.waitForFunction(
      (n) => document.querySelector('td.name')?.textContent === n,
      {},
      XSS_NAME,
    );
    expect(await page.$$('main img')).toHaveLength(0);
    await rowAction(page, XSS_NAME, 'delete');
    await page.waitForSelector('#panel-delete h3');
    expect(await page.$eval('#panel-delete h3', (h) => h.textContent)).toBe(`Delete ${XSS_NAME}?`);
    await shot('xss-name-as-text');
    expect(
      browser().consoleLog.filter((l) => l.startsWith('dialog') || l.startsWith('pageerror')),
    ).toEqual([]);
  });

  // It needs the routes of issue 12 (rotate).
  test('rotate with a grace period of 0: the new key works at once, the old one is refused', async () => {
    const page = await openAsAdmin();
    const name = uniqueName('console-rotated');
    const oldKey = await createAndClose(page, name);
    await rowAction(page, name, 'rotate');
    await page.waitForSelector('#rotate-grace_period_seconds');
    await page.$eval('#rotate-grace_period_seconds', (input) => {
      (input as HTMLInputElement).value = '0';
    });
    await shot('rotate');
    await page.click('#panel-rotate button[type="submit"]');
    // The key, or the error the gateway answered (without the route: 404).
    await page.waitForSelector('#new-key, #panel-rotate .error, #panel-rotate .field-error');
    const error = await page.$eval('#panel-rotate', (p) => p.textContent).catch(() => '');
    expect(await page.$('#new-key'), String(error)).not.toBeNull();
    const newKey = await page.$eval('#new-key', (input) => (input as HTMLInputElement).value);
    expect(newKey).not.toBe(oldKey);
    expect((await withKey(newKey)).status).toBe(200);
    expect((await withKey(oldKey)).status).toBe(401);
  });
}
