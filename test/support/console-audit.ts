/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
// The functions passed to page.evaluate and waitForFunction run in the browser: DOM types.
import { expect, test } from 'vitest';
import type { ConsoleSteps } from './console-steps.js';
import { CLIENTS, uniqueName } from './management.js';
import { apk } from './sidecar.js';

/**
 * The console's audit trail (issue 12's audit-events route): its filters, and the names of
 * targets deleted since.
 * Run inside consoleSuite, against its gateway and provider.
 */
export function consoleAuditTests(steps: ConsoleSteps): void {
  const {
    stack,
    browser,
    call,
    createWithKey,
    shot,
    heading,
    rowAction,
    openAsAdmin,
    createAndClose,
    auditAbout,
  } = steps;

  test('the audit trail filters by actor, target and time, and names targets that still exist', async () => {
    const name = uniqueName('console-audited');
    const { api_key_id: id } = await createWithKey(name);
    const page = await auditAbout(id);
    await page.waitForFunction(
      (n) =>
        [...document.querySelectorAll('tbody tr td.name')].length > 0 &&
        [...document.querySelectorAll('tbody tr td.name')].every((td) =>
          td.textContent?.startsWith(n),
        ),
      {},
      name,
    );
    // The stale notice of an action is gone once the next starts; a bad filter is said.
    // Past 2^53: the browser's number input takes it, the API refuses it.
    await page.type('#audit-actor', '99999999999999999999');
    await page.click('#audit-apply');
    await page.waitForSelector('#audit-actor-error');
    // Times carry their zone.
    await page.$eval('#audit-actor', (i) => {
      (i as HTMLInputElement).value = '';
    });
    await page.click('#audit-apply');
    await page.waitForFunction(() => document.querySelector('#audit-actor-error') === null);
    const time = await page.$eval('tbody tr td', (td) => td.textContent ?? '');
    expect(time).toMatch(/(UTC|GMT|[A-Z]{2,5})/);
  });

  test('the audit trail names a deleted client as it was, in one request per page and no 404', async () => {
    const name = uniqueName('console-gone');
    const { api_key_id: id } = await createWithKey(name);
    const gone = await call(`${CLIENTS}/${id}`, {
      method: 'DELETE',
      headers: apk(stack().adminKey),
    });
    expect(gone.status).toBe(200);
    const page = await auditAbout(id);
    await page.waitForFunction(
      () => [...document.querySelectorAll('tbody tr[data-action]')].length === 2,
    );
    expect(
      await page.$$eval('tbody tr[data-action]', (rows) =>
        rows.map((r) => [r.getAttribute('data-action'), r.querySelector('td.name')?.textContent]),
      ),
    ).toEqual([
      ['api_client.delete', `${name} (#${id})`],
      ['api_client.create', `${name} (#${id})`],
    ]);
    // The names come with the events: no client is read for them, so none answers 404.
    const pages = browser().requests.filter((r) => r.url.includes('/v1/management/audit-events'));
    expect(pages).toHaveLength(2);
    expect(browser().requests.filter((r) => /\/api-clients\/\d+$/.test(r.url))).toEqual([]);
    expect(browser().consoleLog.filter((l) => /^(error|pageerror)/.test(l))).toEqual([]);
  });

  test('the audit trail shows the deletion the operator just made', async () => {
    const page = await openAsAdmin();
    const name = uniqueName('console-audited');
    await createAndClose(page, name);
    await rowAction(page, name, 'delete');
    await page.click('#confirm-delete');
    await page.waitForFunction(() =>
      /Deleted API client/.test(document.querySelector('#message')?.textContent ?? ''),
    );
    const id = Number(
      (await page.$eval('#message', (m) => m.textContent ?? '')).match(/(\d+)/)![1],
    );
    await page.click('nav button:nth-child(2)');
    await heading(page, 'Audit trail');
    // The event, or the error the gateway answered (without the route: 404).
    await page.waitForFunction(
      (target) =>
        document.querySelector('#message.error') !== null ||
        [...document.querySelectorAll('tbody tr[data-action="api_client.delete"]')].some(
          // Deleted since: still named, as the event kept the name it had.
          (tr) => tr.children[4]?.textContent === target,
        ),
      { timeout: 10_000 },
      `${name} (#${id})`,
    );
    expect(await page.$eval('#message', (m) => m.textContent).catch(() => null)).toBeNull();
    await shot('audit');
  });
}
