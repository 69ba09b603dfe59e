import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import puppeteer, { type Browser, type Page } from 'puppeteer-core';

/** Debian's chromium (scripts/ensure-system.sh installs it for the tests): nothing is downloaded. */
export const CHROMIUM =
  process.env.CHROMIUM_BIN ??
  ['/usr/bin/chromium', '/usr/bin/chromium-browser'].find((p) => existsSync(p)) ??
  '/usr/bin/chromium';

/** Where the console tests write their screenshots (gitignored; kept by CI as artifacts). */
export const SCREENSHOTS = join(import.meta.dirname, '..', '..', 'test-artifacts', 'console');

/** One request the page made, as the browser sent it. */
export interface SeenRequest {
  url: string;
  method: string;
  headers: Record<string, string>;
  body: string;
}

export interface ConsoleBrowser {
  browser: Browser;
  page: Page;
  /** Every request of the page so far (documents, scripts, fetches, navigations). */
  requests: SeenRequest[];
  /** Every console message and page error, to explain a failure (and to catch CSP reports). */
  consoleLog: string[];
  /** A full-page screenshot written to SCREENSHOTS/<name>.png. */
  screenshot(name: string): Promise<void>;
  close(): Promise<void>;
}

/**
 * Headless chromium with one page whose every request is recorded through interception. The
 * gateway's and the provider's certificates are throw-away test certificates: the browser is
 * told to accept them (the same as an operator adding the gateway's CA).
 */
export async function openConsoleBrowser(names: string[] = []): Promise<ConsoleBrowser> {
  // The gateway's and the provider's names lead to this machine, as /etc/hosts would make it.
  const mapped = names.filter((n) => n !== 'localhost' && !/^[\d.]+$/.test(n));
  await mkdir(SCREENSHOTS, { recursive: true });
  const browser = await puppeteer.launch({
    executablePath: CHROMIUM,
    headless: true,
    acceptInsecureCerts: true,
    // Root in CI containers has no user namespace sandbox; the pages are the test's own.
    args: [
      '--no-sandbox',
      '--ignore-certificate-errors',
      '--disable-dev-shm-usage',
      ...(mapped.length
        ? [`--host-resolver-rules=${mapped.map((n) => `MAP ${n} 127.0.0.1`).join(', ')}`]
        : []),
    ],
  });
  const page = await browser.newPage();
  await page.setViewport({ width: 1200, height: 800 });
  const requests: SeenRequest[] = [];
  const consoleLog: string[] = [];
  await page.setRequestInterception(true);
  page.on('request', (request) => {
    requests.push({
      url: request.url(),
      method: request.method(),
      headers: request.headers(),
      body: request.postData() ?? '',
    });
    void request.continue();
  });
  page.on('console', (message) => consoleLog.push(`${message.type()}: ${message.text()}`));
  page.on('pageerror', (error) => consoleLog.push(`pageerror: ${String(error)}`));
  page.on('dialog', (dialog) => {
    // An alert() would be the XSS payload running: record it loudly, never wait on it.
    consoleLog.push(`dialog: ${dialog.message()}`);
    void dialog.dismiss();
  });
  return {
    browser,
    page,
    requests,
    consoleLog,
    async screenshot(name) {
      await page.screenshot({
        path: join(SCREENSHOTS, `${name}.png`) as `${string}.png`,
        fullPage: true,
      });
    },
    close: () => browser.close(),
  };
}
