import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { renderConfigFiles } from '../../generator/render.js';
import { loadSettings } from '../../generator/settings.js';

/**
 * docker-compose.replicas.yml's pairs and balancer agree on the caller's address
 * (docs/decisions/20261127-caller-address-behind-a-balancer.md): HAProxy sends exactly one
 * X-Forwarded-For address, the one it saw; the pairs trust the balancer's network for it and
 * keep the per-address failure budget on. The stack itself runs in the container suite.
 */
const ROOT = join(import.meta.dirname, '../..');

test('the pairs trust the balancer for the caller’s address and keep the per-address budget', async () => {
  const settings = await loadSettings({
    file: join(ROOT, 'docker/replicas-settings.yaml'),
    env: {},
  });
  expect(settings.request_id.trusted_proxies).toEqual([
    '10.0.0.0/8',
    '172.16.0.0/12',
    '192.168.0.0/16',
  ]);
  expect(settings.failure_budget.per_address).toBeGreaterThan(0);
  const conf = renderConfigFiles(settings).find((f) => f.path.endsWith('default.conf'))!.content;
  for (const range of settings.request_id.trusted_proxies) {
    expect(conf).toContain(`set_real_ip_from ${range};`);
  }
  expect(conf).toContain('real_ip_header X-Forwarded-For;');
});

test('the balancer drops the caller’s X-Forwarded-For and adds the address it saw', () => {
  const cfg = readFileSync(join(ROOT, 'docker/balancer/haproxy.cfg'), 'utf8');
  const https = cfg.slice(cfg.indexOf('frontend https'), cfg.indexOf('\nfrontend monitor'));
  const directives = https
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
  const dropped = directives.indexOf('http-request del-header X-Forwarded-For');
  expect(dropped).toBeGreaterThan(0);
  expect(directives).toContain('option forwardfor');
  // Nothing else writes the header.
  expect(directives.filter((d) => /x-forwarded-for/i.test(d))).toEqual([
    'http-request del-header X-Forwarded-For',
  ]);
});
