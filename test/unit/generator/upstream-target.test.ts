import { expect, test } from 'vitest';
import { parseSettings, renderConfigFiles } from '../../../generator/index.js';

// Permissions are decided on the request target exactly as the caller sent it, because that is
// what the application receives (docs/decisions/20261128-permissions.md): every location that
// proxies to the app says `proxy_pass` without a URI part (nginx then passes the target
// unchanged), and nothing rewrites the URI first. A change here changes what the rules see.

test('the app receives the raw target: proxy_pass to the app has no URI part, and nothing rewrites', () => {
  const settings = parseSettings({ config_dir: '/etc/config' }, 'test');
  const conf = renderConfigFiles(settings).find((f) => f.path.endsWith('default.conf'))!.content;
  const toApp = [...conf.matchAll(/proxy_pass (http:\/\/gateway_app[^;]*);/g)].map((m) => m[1]);
  expect(toApp.length).toBeGreaterThanOrEqual(2);
  for (const target of toApp) expect(target).toBe('http://gateway_app');
  expect(conf).not.toMatch(/^\s*rewrite\s/m);
});
