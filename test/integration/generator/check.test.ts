import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { NGINX_MODULE } from '../../../common/contract.js';
import {
  checkConfigDir,
  ensureConfigDir,
  LAYOUT,
  parseSettings,
  type Settings,
} from '../../../generator/index.js';
import { NGINX } from './support/nginx.js';

const homes: string[] = [];
afterAll(async () => {
  for (const home of homes) await rm(home, { recursive: true, force: true });
});

async function ensuredDir(): Promise<{ dir: string; settings: Settings }> {
  const home = await mkdtemp(join(tmpdir(), 'gw-check-'));
  homes.push(home);
  const dir = join(home, 'config');
  // nginx -t binds the control socket, whose folder exists wherever nginx runs.
  const settings = parseSettings({
    fqdn: 'gw.example.com',
    config_dir: dir,
    auth_cache: { control_socket: join(home, 'ctl.sock') },
  });
  await ensureConfigDir(dir, settings);
  return { dir, settings };
}

describe('checkConfigDir', () => {
  test('a complete directory passes, nginx -t included', async () => {
    const { dir, settings } = await ensuredDir();
    expect(await checkConfigDir(dir, settings, { nginx: NGINX })).toEqual({
      problems: [],
      notes: [],
      nginxTested: true,
    });
  });

  test('a broken hand edit is caught by nginx -t, with nginx naming the file and line', async () => {
    const { dir, settings } = await ensuredDir();
    const file = join(dir, LAYOUT.defaultConf);
    const text = await readFile(file, 'utf8');
    await writeFile(
      file,
      text.replace('set $api_keys_enabled true;', 'set $api_keys_enabled true'),
    );
    const report = await checkConfigDir(dir, settings, { nginx: NGINX });
    expect(report.nginxTested).toBe(true);
    expect(report.problems).toEqual([expect.stringContaining('nginx -t failed')]);
    expect(report.problems[0]).toContain(`${file}:`);
  });

  test('missing files are listed and nginx -t is not attempted', async () => {
    const { dir, settings } = await ensuredDir();
    await rm(join(dir, 'nginx', 'ssl'), { recursive: true });
    const report = await checkConfigDir(dir, settings, { nginx: NGINX });
    expect(report.problems).toEqual([
      expect.stringContaining(join(dir, LAYOUT.sslConf)),
      expect.stringContaining(join(dir, LAYOUT.certificate)),
      expect.stringContaining(join(dir, LAYOUT.key)),
    ]);
    expect(report.nginxTested).toBe(false);
  });

  test('the certificate is checked against the FQDN of the settings', async () => {
    const { dir, settings } = await ensuredDir();
    const report = await checkConfigDir(
      dir,
      { ...settings, fqdn: 'other.example.com' },
      { nginx: null },
    );
    expect(report.problems).toHaveLength(2);
    expect(report.problems.join('\n')).toContain('expected "other.example.com"');
  });

  test('without nginx, or for files rendered for another place, nginx -t is skipped with a note', async () => {
    const { dir, settings } = await ensuredDir();
    expect(await checkConfigDir(dir, settings, { nginx: null })).toMatchObject({
      problems: [],
      notes: ['nginx -t skipped: no nginx on the PATH'],
      nginxTested: false,
    });
    const elsewhere = { ...settings, config_dir: '/etc/config' };
    expect((await checkConfigDir(dir, elsewhere, { nginx: NGINX })).notes).toEqual([
      `nginx -t skipped: the files refer to config_dir /etc/config, not ${dir}`,
    ]);
  });
});

// The nginx module answers a plain hit before a location's Lua access code runs: its directive
// anywhere but the generated `location /`, or beside Lua added there, would skip that code
// without a word (issue 40, finding 2). Refused before nginx -t, naming the file and line.
describe('the nginx module directive, where an operator moved or kept it', () => {
  /** The rendered default.conf edited by `edit`; the check's problems. */
  async function problemsAfter(edit: (text: string) => string): Promise<string[]> {
    const { dir, settings } = await ensuredDir();
    const file = join(dir, LAYOUT.defaultConf);
    await writeFile(file, edit(await readFile(file, 'utf8')));
    return (await checkConfigDir(dir, settings, { nginx: NGINX })).problems;
  }
  const ROOT_LOCATION = '    location / {\n';
  const MODULE_LINE = `        ${NGINX_MODULE.directive} on;\n`;

  test('as rendered: in `location /` only, and accepted', async () => {
    expect(await problemsAfter((t) => t)).toEqual([]);
  });

  test('Lua added to `location /` beside it: refused, saying which and what to do', async () => {
    const problems = await problemsAfter((t) =>
      t.replace(
        MODULE_LINE,
        `${MODULE_LINE}        access_by_lua_block { if ngx.var.arg_x then ngx.exit(403) end }\n`,
      ),
    );
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(
      /default\.conf:\d+: `location \/` has `access_by_lua_block` of its own and `gateway_hit on;`/,
    );
  });

  test('in a location an operator added: refused', async () => {
    const problems = await problemsAfter((t) =>
      t.replace(
        ROOT_LOCATION,
        `    location /reports/ {\n${MODULE_LINE}        proxy_pass http://gateway_app;\n    }\n\n${ROOT_LOCATION}`,
      ),
    );
    expect(problems).toHaveLength(1);
    expect(problems[0]).toContain("belongs only in a server's generated `location /`");
  });

  test('nested in `location /`: refused; `gateway_hit off;` anywhere is fine', async () => {
    const problems = await problemsAfter((t) =>
      t.replace(
        MODULE_LINE,
        `${MODULE_LINE}        location /inner/ {\n    ${MODULE_LINE}        }\n        location /other/ {\n            ${NGINX_MODULE.directive} off;\n        }\n`,
      ),
    );
    expect(problems).toHaveLength(1);
    expect(problems[0]).toContain('belongs only in');
  });
});
