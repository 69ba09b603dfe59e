import { describe, expect, test } from 'vitest';
import { ROUTES } from '../../../engine/routes/table.js';
import { engine } from './support/engine.js';
import { raw } from './support/raw-http.js';

// Written out by hand, so a route that silently disappears from the table fails here.
const EXPECTED = [
  'POST /resources/json/service/session',
  'GET /resources/json/service/session',
  'DELETE /resources/json/service/session',
  'POST /resources/json/service/session/delete',
  'POST /resources/json/service/logout',
  'POST /resources/json/service/login',
  'GET /resources/json/service/whoami',
  'GET /resources/json/service/about',
  'GET /resources/json/service/user/current',
  'GET /resources/json/service/user',
  'POST /resources/json/service/user',
  'GET /resources/json/service/user/{name}',
  'POST /resources/json/service/user/{name}',
  'DELETE /resources/json/service/user/{name}',
  'POST /resources/json/service/user/{name}/delete',
  'GET /api',
];

function listedRoutes(html: string): string[] {
  return [
    ...html.matchAll(/<section class="route" [^>]*data-method="([A-Z]+)" data-path="([^"]+)"/g),
  ].map((m) => `${m[1]} ${m[2]}`);
}

describe('GET /api: a human-readable reference generated from the route table', () => {
  test('is HTML, needs no session, and lists every route exactly once', async () => {
    const e = await engine();
    const answer = await raw(e.url, 'GET', '/api');
    expect(answer.status).toBe(200);
    expect(answer.headers['content-type']).toMatch(/^text\/html; charset=utf-8/);
    const listed = listedRoutes(answer.text);
    expect([...listed].sort()).toEqual([...EXPECTED].sort());
    expect(listed).toHaveLength(ROUTES.length);
  });

  test('every route it lists is served: none answers endpoint.missing or method.not.allowed', async () => {
    const e = await engine();
    const listed = listedRoutes((await raw(e.url, 'GET', '/api')).text);
    for (const route of listed) {
      const [method, path] = route.split(' ') as [string, string];
      const answer = await raw(e.url, method, path.replace('{name}', 'admin'));
      expect(answer.status, route).not.toBe(404);
      expect(answer.status, route).not.toBe(405);
    }
  });

  test('shows input fields with the versions that know them, for the configured versions', async () => {
    const e = await engine({
      versions: [
        { major: 1, minor: 2, micro: 0 },
        { major: 2, minor: 0, micro: 0 },
      ],
    });
    const html = (await raw(e.url, 'GET', '/api')).text;
    const row = (record: string, field: string) => {
      const section = html.slice(html.indexOf(`id="record-${record}"`));
      const start = section.indexOf(`data-field="${field}"`);
      return section.slice(start, section.indexOf('</tr>', start));
    };
    expect(html).toContain('<code>2.0.0</code>, <code>1.2.0</code>');
    expect(row('User', 'email')).toContain('since 1.1<br>here: 1.1–1.2, 2.0');
    expect(row('User', 'admin')).toContain('before major 2<br>here: 1.0–1.2');
    expect(row('User', 'enabled')).toContain('since 2.1<br>here: none');
    expect(row('LoginRequest', 'target')).toContain('<code>SYSTEM</code>, <code>DOMAIN</code>');
    expect(row('APIVersion', 'major')).toContain('required on create');
    // Query parameters of GET routes are listed with the route.
    const list = html.slice(
      html.indexOf('data-method="GET" data-path="/resources/json/service/user"'),
    );
    expect(list.slice(0, list.indexOf('</section>'))).toContain('data-field="limit"');
  });
});
