/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
// The functions passed to page.evaluate and waitForFunction run in the browser: DOM types.
import type { Page } from 'puppeteer-core';
import { expect } from 'vitest';
import { type ConsoleBrowser, openConsoleBrowser } from './console-browser.js';
import { setDefaultConf } from './default-conf.js';
import type { HttpOptions } from './http.js';
import { CLIENTS } from './management.js';
import type { TestOidcProvider } from './oidc-provider.js';
import { apk } from './sidecar.js';
import type { Stack } from './stack.js';
import { callStack } from './stack-http.js';

/** The console's client at the provider, and the person who signs in (their login is `sub`). */
export const CONSOLE_CLIENT = 'gateway-console';
export const OPERATOR = 'console-operator';

/** What consoleSuite starts once for all its tests; the browser is each test's own. */
export interface ConsoleRun {
  stack: Stack;
  provider: TestOidcProvider;
  /** The name the browser reaches the provider by (its issuer's host). */
  providerName: string;
  browser: ConsoleBrowser | null;
}

/** The console suite's steps, through the API and through the browser's pages. */
export type ConsoleSteps = ReturnType<typeof consoleSteps>;

/**
 * The steps the console suite's tests share (test/support/console-*.ts), on the run the suite
 * started: `run` is read at each call, so they may be made before the run has started.
 */
export function consoleSteps(run: ConsoleRun) {
  const stack = () => run.stack;
  const browser = () => run.browser!;
  const call = (path: string, options: HttpOptions = {}) => callStack(run.stack, path, options);
  const withKey = (key: string, path = '/api') => call(path, { headers: apk(key) });
  // A client with a key, made through the API by the bootstrap admin (not through the console).
  const createWithKey = async (name: string, isAdmin = false) => {
    const created = await call(CLIENTS, {
      method: 'POST',
      headers: apk(run.stack.adminKey),
      json: { name, is_admin: isAdmin, generate_api_key: true },
    });
    expect(created.status, created.text).toBe(201);
    return created.json as { api_key_id: number; token: string };
  };

  /** A new browser on the console; `failedConfigReads`: its first reads of config.json fail. */
  const open = async (failedConfigReads = 0): Promise<Page> => {
    run.browser = await openConsoleBrowser([run.stack.fqdn, run.providerName]);
    run.browser.failNext('/console/config.json', failedConfigReads);
    // Chromium aborts a navigation with ERR_NETWORK_CHANGED when the host's interfaces change
    // under it (a container engine adding or removing a bridge port, as the container suite
    // does between stacks): the browser's event, not the gateway's answer. Asked again, twice.
    for (let attempt = 1; ; attempt += 1) {
      try {
        await run.browser.page.goto(`${run.stack.baseUrl}/console/`, {
          waitUntil: 'networkidle0',
        });
        return run.browser.page;
      } catch (err) {
        if (attempt >= 3 || !String(err).includes('ERR_NETWORK_CHANGED')) throw err;
      }
    }
  };
  // Both stacks write them; the names say which (CI keeps the folder as an artifact).
  const shot = async (name: string) => {
    await run.browser?.screenshot(`${run.stack.kind}-${name}`);
  };
  const heading = (page: Page, text: string) =>
    page.waitForFunction((t) => document.querySelector('main h2')?.textContent === t, {}, text);
  const signInWithKey = async (page: Page, key: string) => {
    await page.type('#api-key', key);
    // Keyboard: Enter submits the labelled form.
    await page.keyboard.press('Enter');
    await heading(page, 'API clients');
    await page.waitForSelector('tbody tr');
  };
  const rowAction = async (page: Page, name: string, action: string) => {
    await page.waitForFunction(
      (n) => [...document.querySelectorAll('td.name')].some((td) => td.textContent === n),
      {},
      name,
    );
    await page.evaluate(
      (n, a) => {
        const row = [...document.querySelectorAll('tbody tr')].find(
          (tr) => tr.querySelector('td.name')?.textContent === n,
        );
        (row!.querySelector(`button[data-action="${a}"]`) as HTMLButtonElement).click();
      },
      name,
      action,
    );
  };
  const createInConsole = async (page: Page, name: string): Promise<string> => {
    await page.click('#new-client');
    await page.type('#create-name', name);
    await page.click('#panel-create button[type="submit"]');
    await page.waitForSelector('#new-key');
    return await page.$eval('#new-key', (input) => (input as HTMLInputElement).value);
  };
  const seeAll = (page: Page) =>
    // The largest page, so that the rows a test created are on it.
    page.select('#limit', '1000').then(() => page.waitForSelector('tbody tr'));
  /** A new browser signed in with the admin key, every client's row on its page. */
  const openAsAdmin = async (): Promise<Page> => {
    const page = await open();
    await signInWithKey(page, run.stack.adminKey);
    await seeAll(page);
    return page;
  };
  /** A client created in the console, the panel that shows its key closed: the key. */
  const createAndClose = async (page: Page, name: string): Promise<string> => {
    const key = await createInConsole(page, name);
    await page.click('#key-done');
    return key;
  };

  /**
   * The OpenID Connect button, rendered once the console has read config.json (which may come
   * after network idle). Chromium drops a page's requests with ERR_NETWORK_CHANGED when the
   * container engine changes the host's interfaces (as after a stack restart): then, as open()
   * does for the navigation, the page is loaded again, once. Any other miss fails with what the
   * page showed and which requests got no answer.
   */
  const offeredOidc = async (page: Page) => {
    const button = () => page.waitForSelector('#oidc-sign-in', { timeout: 15_000 });
    try {
      await button();
    } catch (err) {
      const failed = run.browser?.failed ?? [];
      if (!failed.some((line) => line.includes('ERR_NETWORK_CHANGED'))) {
        const shown = await page.evaluate(() => document.body.textContent ?? '').catch(() => '');
        throw new Error(
          `no OpenID Connect sign-in offered: ${String(err)}\npage: ${shown.slice(0, 500)}\nunanswered: ${failed.join('; ')}\nconsole: ${(run.browser?.consoleLog ?? []).join('; ')}`,
        );
      }
      failed.length = 0;
      await page.reload({ waitUntil: 'networkidle0' });
      await button();
    }
  };
  /** Through the provider's own pages: login (any password), consent, back to the console. */
  const signInWithProvider = async (page: Page, screenshot = false) => {
    await offeredOidc(page);
    await page.click('#oidc-sign-in');
    await page.waitForSelector('input[name="login"]');
    if (screenshot) await shot('oidc-provider-login');
    await page.type('input[name="login"]', OPERATOR);
    const password = await page.$('input[name="password"]');
    if (password) await password.type('any password');
    await Promise.all([page.waitForNavigation(), page.click('button[type="submit"]')]);
    // The provider asks for consent once per sign-in session.
    if (!page.url().startsWith(run.stack.baseUrl)) {
      await Promise.all([page.waitForNavigation(), page.click('button[type="submit"]')]);
    }
    await heading(page, 'API clients');
    await page.waitForSelector('tbody tr');
  };
  /** Rewrites one `set $name value;` line of the mounted default.conf (edit, then restart). */
  const editDefaultConf = (name: string, value: string) =>
    setDefaultConf(run.stack.configDir, { [name]: value });
  /** Signed in with the admin key, the audit trail filtered to the events about client `id`. */
  const auditAbout = async (id: number): Promise<Page> => {
    const page = await open();
    await signInWithKey(page, run.stack.adminKey);
    await page.click('nav button:nth-of-type(2)');
    await heading(page, 'Audit trail');
    // The view's first list drawn before the filter is typed: a list landing after the typing
    // drew the form again and lost it (seen once in CI, against the containers).
    await page.waitForSelector('tbody tr td.name');
    await page.type('#audit-target', String(id));
    await page.click('#audit-apply');
    return page;
  };
  const requestTo = (prefix: string) => browser().requests.find((r) => r.url.startsWith(prefix));

  return {
    stack,
    browser,
    provider: () => run.provider,
    call,
    withKey,
    createWithKey,
    open,
    shot,
    heading,
    signInWithKey,
    rowAction,
    createInConsole,
    seeAll,
    openAsAdmin,
    createAndClose,
    signInWithProvider,
    editDefaultConf,
    auditAbout,
    requestTo,
  };
}
