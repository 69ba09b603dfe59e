/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
// The functions passed to page.evaluate and waitForFunction run in the browser: DOM types.
import type { Page } from 'puppeteer-core';
import { expect, test } from 'vitest';
import { axeViolations } from './console-browser.js';
import type { ConsoleSteps } from './console-steps.js';
import { CLIENTS, uniqueName } from './management.js';
import { apk } from './sidecar.js';

interface Rule {
  methods: string[];
  path: string;
}

/**
 * Issue 39's console part: the detail view shows and edits a client's permissions (a choice
 * between everything and a rule list, the rules as a table), checks them with the API's own
 * validator before sending, shows what the API still refuses, and says the effect in plain
 * words. Run inside consoleSuite, against the same gateway and browser.
 */
export function consolePermissionsTests(ctx: ConsoleSteps): void {
  const admin = () => apk(ctx.stack().adminKey);
  const readClient = async (id: number) => {
    const res = await ctx.call(`${CLIENTS}/${id}`, { headers: admin() });
    expect(res.status, res.text).toBe(200);
    return res.json as { permissions?: Rule[] | null };
  };
  /** Signed in as the admin, on the detail screen of client `id`. */
  const openDetail = async (id: number, name: string): Promise<Page> => {
    const page = await ctx.openAsAdmin();
    await page.waitForSelector(`tr[data-id="${id}"] button[data-action="details"]`);
    await page.click(`tr[data-id="${id}"] button[data-action="details"]`);
    await ctx.heading(page, name);
    await page.waitForSelector('#panel-permissions');
    return page;
  };
  const typeInto = async (page: Page, selector: string, text: string) => {
    await page.$eval(selector, (input) => {
      (input as HTMLInputElement).value = '';
    });
    await page.type(selector, text);
  };
  const setMethods = async (page: Page, row: number, methods: string[]) => {
    for (const box of await page.$$(`tr[data-rule="${row}"] input[data-method]`)) {
      const method = await box.evaluate((b) => b.getAttribute('data-method'));
      const checked = await box.evaluate((b) => (b as HTMLInputElement).checked);
      if (checked !== methods.includes(method!)) await box.click();
    }
  };
  /** Fills the rules table with `rules`, from the choice "only what these rules allow". */
  const fillRules = async (page: Page, rules: Rule[]) => {
    await page.click('#permissions-rules');
    await page.waitForSelector('#rule-0-path');
    for (const [i, rule] of rules.entries()) {
      if (i > 0) {
        await page.click('#add-rule');
        await page.waitForSelector(`#rule-${i}-path`);
      }
      await setMethods(page, i, rule.methods);
      await typeInto(page, `#rule-${i}-path`, rule.path);
    }
  };
  const lines = (page: Page, selector: string) =>
    page.$$eval(`${selector} li`, (items) => items.map((li) => li.textContent));
  const shownRules = (page: Page) =>
    page.$$eval('#permission-rules tbody tr', (rows) =>
      rows.map((tr) => ({
        methods: [...tr.querySelectorAll<HTMLInputElement>('input[data-method]')]
          .filter((b) => b.checked)
          .map((b) => b.getAttribute('data-method')),
        path: tr.querySelector<HTMLInputElement>('input.pattern')!.value,
      })),
    );
  /** The bodies of the PUTs the page sent for client `id`, parsed. */
  const puts = (id: number) =>
    ctx
      .browser()
      .requests.filter((r) => r.method === 'PUT' && r.url.endsWith(`${CLIENTS}/${id}`))
      .map((r) => JSON.parse(r.body) as unknown);
  const saved = (page: Page) =>
    page.waitForFunction(() =>
      /^Saved: /.test(document.querySelector('#message.notice')?.textContent?.trim() ?? ''),
    );

  test("a client's permissions: rules edited as a table, saved, in plain words, still there after a reload; axe finds nothing", async () => {
    // The validator the console runs is the API's, compiled by the build and served as a file.
    const shared = await ctx.call('/console/vendor/common/permissions.js');
    expect(shared.status).toBe(200);
    expect(shared.headers['content-type']).toMatch(/^text\/javascript/);
    expect(shared.text).toContain('export function validatePermissions(');
    expect(shared.text).not.toContain('sourceMappingURL');
    const name = uniqueName('console-permissions');
    const { api_key_id: id, token } = await ctx.createWithKey(name);
    expect((await ctx.call('/api', { headers: apk(token) })).status).toBe(200);
    const page = await openDetail(id, name);
    // A new client may call everything, and the view says so.
    expect(await lines(page, '#detail-permissions')).toEqual([
      'may call every method on every path',
    ]);
    expect(
      await page.$eval('#permissions-everything', (r) => (r as HTMLInputElement).checked),
    ).toBe(true);
    expect(await page.$('#permission-rules')).toBeNull();
    expect(await axeViolations(page)).toEqual([]);

    const rules = [
      { methods: ['GET'], path: '/resources/json/service/**' },
      { methods: ['POST', 'PUT'], path: '/orders/*/lines' },
    ];
    await fillRules(page, rules);
    // The effect, said before saving.
    expect(await lines(page, '#permissions-preview')).toEqual([
      'may call GET, HEAD on /resources/json/service/**',
      'may call POST, PUT on /orders/*/lines',
    ]);
    expect(await axeViolations(page)).toEqual([]);
    await ctx.shot('permissions-edit');
    await page.click('#save-permissions');
    await saved(page);
    expect(puts(id)).toEqual([{ permissions: rules }]);
    // The API holds them as sent, nginx applies them on the next request, and the view shows
    // them as they now are.
    expect((await readClient(id)).permissions).toEqual(rules);
    const refused = await ctx.call('/api', { headers: apk(token) });
    expect(refused.status, refused.text).toBe(403);
    await page.waitForFunction(
      () => document.querySelectorAll('#detail-permissions li').length === 2,
    );
    expect(await lines(page, '#detail-permissions')).toEqual([
      'may call GET, HEAD on /resources/json/service/**',
      'may call POST, PUT on /orders/*/lines',
    ]);

    // A reload of the page reads them again from the API.
    await page.reload({ waitUntil: 'networkidle0' });
    await ctx.heading(page, 'API clients');
    await ctx.seeAll(page);
    await page.click(`tr[data-id="${id}"] button[data-action="details"]`);
    await ctx.heading(page, name);
    await page.waitForSelector('#permission-rules');
    expect(await page.$eval('#permissions-rules', (r) => (r as HTMLInputElement).checked)).toBe(
      true,
    );
    expect(await shownRules(page)).toEqual(rules);
    expect(await lines(page, '#detail-permissions')).toEqual([
      'may call GET, HEAD on /resources/json/service/**',
      'may call POST, PUT on /orders/*/lines',
    ]);
    expect(
      ctx.browser().consoleLog.filter((l) => /^(error|pageerror)/.test(l)),
      'no console error (a CSP refusal would be one)',
    ).toEqual([]);
  }, 90_000);

  test("a bad rule is refused in the browser by the API's own validator, naming the rule; nothing is sent", async () => {
    const name = uniqueName('console-bad-rule');
    const { api_key_id: id } = await ctx.createWithKey(name);
    const page = await openDetail(id, name);
    const bad = [
      { methods: ['GET'], path: '/reports/**' },
      { methods: ['GET'], path: '/reports/**/raw' },
      { methods: [], path: '/orders' },
    ];
    await fillRules(page, bad);
    expect(await lines(page, '#permissions-preview')).toEqual([
      'may call GET, HEAD on /reports/**',
      'rule 2 is not complete or not valid yet',
      'rule 3 is not complete or not valid yet',
    ]);
    await page.click('#save-permissions');
    await page.waitForSelector('#rule-1-path-error');
    const pathError = await page.$eval('#rule-1-path-error', (e) => e.textContent ?? '');
    const methodsError = await page.$eval('#rule-2-methods-error', (e) => e.textContent ?? '');
    expect(pathError).toMatch(/^Rule 2: permissions\[1\]\.path /);
    expect(methodsError).toMatch(/^Rule 3: permissions\[2\]\.methods /);
    // The field is marked, described by its error, and has the focus.
    expect(await page.$eval('#rule-1-path', (i) => i.getAttribute('aria-invalid'))).toBe('true');
    expect(await page.$eval('#rule-1-path', (i) => i.getAttribute('aria-describedby'))).toBe(
      'rule-1-path-error',
    );
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('rule-1-path');
    expect(await page.$eval('#rule-0-path', (i) => i.getAttribute('aria-invalid'))).toBe('false');
    expect(puts(id)).toEqual([]);
    expect(await axeViolations(page)).toEqual([]);
    await ctx.shot('permissions-bad-rule');

    // The same words the API answers for the same rules (one validator for both).
    const refused = await ctx.call(`${CLIENTS}/${id}`, {
      method: 'PUT',
      headers: admin(),
      json: { permissions: bad },
    });
    expect(refused.status, refused.text).toBe(400);
    const apiErrors = (refused.json as { errors: { field?: string; message: string }[] }).errors;
    expect(pathError).toBe(
      `Rule 2: ${apiErrors.find((e) => e.field === 'permissions[1].path')?.message}`,
    );
    expect(methodsError).toBe(
      `Rule 3: ${apiErrors.find((e) => e.field === 'permissions[2].methods')?.message}`,
    );
    expect((await readClient(id)).permissions).toBeNull();
  }, 90_000);

  test('removing every rule, or choosing everything, sends null; an error the API still answers is shown', async () => {
    const name = uniqueName('console-everything');
    const { api_key_id: id, token } = await ctx.createWithKey(name);
    const two = [
      { methods: ['GET'], path: '/a/**' },
      { methods: ['DELETE'], path: '/b/*' },
    ];
    const set = await ctx.call(`${CLIENTS}/${id}`, {
      method: 'PUT',
      headers: admin(),
      json: { permissions: two },
    });
    expect(set.status, set.text).toBe(200);
    const page = await openDetail(id, name);
    expect(await shownRules(page)).toEqual(two);
    // Removing the last rule is choosing everything, and the choice and the words say so.
    await page.click('#rule-1-remove');
    await page.waitForFunction(
      () => document.querySelectorAll('#permission-rules tbody tr').length === 1,
    );
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('rule-0-remove');
    await page.click('#rule-0-remove');
    await page.waitForSelector('#permission-rules', { hidden: true });
    expect(
      await page.$eval('#permissions-everything', (r) => (r as HTMLInputElement).checked),
    ).toBe(true);
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('permissions-everything');
    expect(await lines(page, '#permissions-preview')).toEqual([
      'may call every method on every path',
    ]);
    await page.click('#save-permissions');
    await saved(page);
    expect(puts(id)).toEqual([{ permissions: null }]);
    expect((await readClient(id)).permissions).toBeNull();

    // Rules again, then the choice "everything" over them: null as well.
    await page.waitForSelector('#permissions-everything');
    await fillRules(page, [{ methods: ['GET'], path: '/c' }]);
    await page.click('#save-permissions');
    await saved(page);
    expect((await readClient(id)).permissions).toEqual([{ methods: ['GET'], path: '/c' }]);
    expect((await ctx.call('/api', { headers: apk(token) })).status).toBe(403);
    await page.waitForSelector('#rule-0-path');
    await page.click('#permissions-everything');
    await page.waitForSelector('#permission-rules', { hidden: true });
    await page.click('#save-permissions');
    await saved(page);
    expect(puts(id).at(-1)).toEqual({ permissions: null });
    expect((await readClient(id)).permissions).toBeNull();
    expect((await ctx.call('/api', { headers: apk(token) })).status).toBe(200);

    // What the API answers despite the check (here: the client deleted meanwhile) is shown on
    // the panel, and the operator stays on it.
    await page.waitForSelector('#permissions-rules');
    await fillRules(page, [{ methods: ['GET'], path: '/d' }]);
    const gone = await ctx.call(`${CLIENTS}/${id}`, { method: 'DELETE', headers: admin() });
    expect(gone.status).toBe(200);
    await page.click('#save-permissions');
    await page.waitForSelector('#panel-permissions .error');
    expect(await page.$eval('#panel-permissions .error', (p) => p.getAttribute('role'))).toBe(
      'alert',
    );
    expect(await page.$eval('#panel-permissions .error', (p) => p.textContent)).toMatch(/\S/);
    expect(await shownRules(page)).toEqual([{ methods: ['GET'], path: '/d' }]);
    expect(await axeViolations(page)).toEqual([]);
  }, 90_000);

  test('a client the API gave no rule ([]: it may call nothing) is shown so, and saved unchanged', async () => {
    const name = uniqueName('console-suspended');
    const { api_key_id: id } = await ctx.createWithKey(name);
    const set = await ctx.call(`${CLIENTS}/${id}`, {
      method: 'PUT',
      headers: admin(),
      json: { permissions: [] },
    });
    expect(set.status, set.text).toBe(200);
    const page = await openDetail(id, name);
    expect(await lines(page, '#detail-permissions')).toEqual(['may call nothing (no rule)']);
    expect(await page.$eval('#permissions-rules', (r) => (r as HTMLInputElement).checked)).toBe(
      true,
    );
    expect(await shownRules(page)).toEqual([]);
    expect(await page.$eval('#no-rules', (p) => p.textContent)).toMatch(/may call nothing/);
    expect(await lines(page, '#permissions-preview')).toEqual(['may call nothing (no rule)']);
    expect(await axeViolations(page)).toEqual([]);
    await page.click('#save-permissions');
    await saved(page);
    expect(puts(id)).toEqual([{ permissions: [] }]);
    expect((await readClient(id)).permissions).toEqual([]);
  }, 90_000);
}
