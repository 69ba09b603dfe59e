import { readdirSync } from 'node:fs';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import {
  ensureConfigDir,
  loadSettings,
  renderConfigFiles,
  renderMainConf,
  testNginxConfig,
} from '../../../generator/index.js';
import { expectGolden } from './support/golden.js';
import { NGINX } from './support/nginx.js';

const FIXTURES = join(import.meta.dirname, '..', '..', 'fixtures');

/** Every `test/fixtures/<name>.yaml`; its golden files live in `<name>.expected/`. */
const fixtures = readdirSync(FIXTURES)
  .filter((file) => file.endsWith('.yaml'))
  .map((file) => file.slice(0, -'.yaml'.length))
  .sort();

async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true }).catch(() => []);
  return entries
    .filter((entry) => entry.isFile())
    .map((entry) => relative(dir, join(entry.parentPath, entry.name)))
    .sort();
}

const scratch: string[] = [];
afterAll(async () => {
  for (const dir of scratch) await rm(dir, { recursive: true, force: true });
});

test('there are at least six settings fixtures', () => {
  expect(fixtures.length).toBeGreaterThanOrEqual(6);
});

describe.each(fixtures)('fixture %s', (name) => {
  const settingsFile = join(FIXTURES, `${name}.yaml`);
  const expectedDir = join(FIXTURES, `${name}.expected`);

  test('renders exactly its golden files', async () => {
    const rendered = renderConfigFiles(await loadSettings({ file: settingsFile }));
    for (const file of rendered) await expectGolden(file.content, join(expectedDir, file.path));
    expect(await filesUnder(expectedDir)).toEqual(rendered.map((f) => f.path).sort());
  });

  test('passes nginx -t with the real nginx', async () => {
    const home = await mkdtemp(join(tmpdir(), 'gw-golden-'));
    scratch.push(home);
    // A space in the path: rendered paths are quoted, and nginx must agree.
    const configDir = join(home, 'gateway state', 'config');
    const settings = await loadSettings({
      file: settingsFile,
      // nginx -t binds the control socket: its folder must exist, as it does where nginx runs.
      overrides: { config_dir: configDir, auth_cache: { control_socket: join(home, 'ctl.sock') } },
    });
    await ensureConfigDir(configDir, settings);
    const result = await testNginxConfig(NGINX, configDir);
    expect(result.output).toContain('test is successful');
    expect(result.ok).toBe(true);
  });
});

test('the main nginx.conf renders as its golden file', async () => {
  const text = renderMainConf({
    runtimeDir: '/run/gateway',
    configDir: '/etc/config',
    errorLog: 'stderr',
    accessLog: 'stdout',
    user: 'nginx',
    luaDir: '/opt/gateway/lua',
    staticRoot: '/opt/gateway',
    // As on Debian; OpenResty has none (the Lua module is built in).
    modules: [
      '/usr/lib/nginx/modules/ndk_http_module.so',
      '/usr/lib/nginx/modules/ngx_http_lua_module.so',
      '/usr/lib/nginx/modules/ngx_http_gateway_hit_module.so',
    ],
  });
  await expectGolden(text, join(FIXTURES, 'main-conf.expected.conf'));
});
