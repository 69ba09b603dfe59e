import { existsSync, readFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type { AxeResults } from 'axe-core';
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
  /** Requests that got no answer: `<url> <chromium's error>` (ERR_NETWORK_CHANGED, ...). */
  failed: string[];
  /**
   * The next `times` requests whose URL ends with `suffix` fail as a network failure in the
   * browser (no answer reaches the page), as chromium's ERR_NETWORK_CHANGED does.
   */
  failNext(suffix: string, times: number): void;
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
  const failed: string[] = [];
  const failures: { suffix: string; left: number }[] = [];
  await page.setRequestInterception(true);
  page.on('request', (request) => {
    requests.push({
      url: request.url(),
      method: request.method(),
      headers: request.headers(),
      body: request.postData() ?? '',
    });
    const failure = failures.find((f) => f.left > 0 && request.url().endsWith(f.suffix));
    if (failure) {
      failure.left -= 1;
      void request.abort('internetdisconnected');
    } else void request.continue();
  });
  page.on('requestfailed', (request) =>
    failed.push(`${request.url()} ${request.failure()?.errorText ?? 'failed'}`),
  );
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
    failed,
    failNext(suffix, times) {
      failures.push({ suffix, left: times });
    },
    async screenshot(name) {
      await page.screenshot({
        path: join(SCREENSHOTS, `${name}.png`) as `${string}.png`,
        fullPage: true,
      });
    },
    close: () => browser.close(),
  };
}

/** axe-core's browser build, read once (a devDependency; the page never loads it itself). */
let axeSource: string | null = null;

/**
 * Runs axe-core (WCAG 2.0-2.2 A and AA, and axe's best practices) on what `page` shows now,
 * within `selector` when given. It is evaluated through the DevTools protocol, which the
 * console's CSP (script-src 'self') does not apply to, so the page's own policy stays on.
 * Empty when clean.
 */
export async function axeViolations(page: Page, selector = 'body'): Promise<string[]> {
  axeSource ??= readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
  await page.evaluate(axeSource);
  const results = (await page.evaluate(
    (within) =>
      (globalThis as unknown as { axe: { run(c: string, o: object): Promise<unknown> } }).axe.run(
        within,
        {
          runOnly: {
            type: 'tag',
            values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa', 'best-practice'],
          },
          resultTypes: ['violations'],
        },
      ),
    selector,
  )) as AxeResults;
  return results.violations.map(
    (v) =>
      `${v.id} (${v.impact}): ${v.help} — ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`,
  );
}
