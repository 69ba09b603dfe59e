import { execFile } from 'node:child_process';
import { cp, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify, stripVTControlCharacters } from 'node:util';
import { afterAll, beforeAll, expect, test } from 'vitest';

/**
 * The package as users get it (issue 21 items 2 and 3): `npm pack`, installed from the tarball
 * into a folder of its own, never from this tree, so that a missing `files` entry or export
 * fails here. In that folder: examples/app-behind-gateway's own test (its app behind the
 * gateway through the module, on the run's images), the `gateway-config` bin and both exports.
 * Dependencies come from the npm cache when it has them (--prefer-offline).
 */

const ROOT = join(import.meta.dirname, '../..');
const EXAMPLE = join(ROOT, 'examples/app-behind-gateway');
const run = promisify(execFile);
let work: string;
let consumer: string;

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'gw-packed-'));
  const t0 = performance.now();
  // prepack builds dist/ and puts the lockfile where the image build finds it.
  await run('npm', ['pack', '--silent', '--pack-destination', work], {
    cwd: ROOT,
    maxBuffer: 16 * 1024 * 1024,
  });
  const [tarball] = (await readdir(work)).filter((name) => name.endsWith('.tgz'));
  if (tarball === undefined) throw new Error(`npm pack left no tarball in ${work}`);
  consumer = join(work, 'example');
  await mkdir(consumer);
  for (const file of ['app.mjs', 'app.test.mjs', 'vitest.config.mjs']) {
    await cp(join(EXAMPLE, file), join(consumer, file));
  }
  // The example's own package.json, with the package taken from the tarball.
  const manifest = (await import(join(EXAMPLE, 'package.json'), { with: { type: 'json' } }))
    .default as { devDependencies: Record<string, string> };
  manifest.devDependencies['authenticating-gateway'] = `file:${join(work, tarball)}`;
  await writeFile(join(consumer, 'package.json'), JSON.stringify(manifest, null, 2));
  await run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--ignore-scripts'], {
    cwd: consumer,
    maxBuffer: 16 * 1024 * 1024,
  });
  console.info(`packed and installed in ${Math.round(performance.now() - t0)} ms`);
}, 240_000);

afterAll(async () => {
  if (work) await rm(work, { recursive: true, force: true });
});

test('the installed gateway-config bin renders an /etc/config directory', async () => {
  const target = join(work, 'etc-config');
  const { stdout } = await run(join(consumer, 'node_modules/.bin/gateway-config'), [
    'render',
    target,
  ]);
  expect(stdout).toContain('wrote');
  const files = (await readdir(target, { recursive: true })).map(String).sort();
  expect(files).toEqual(
    expect.arrayContaining([
      'nginx/conf.d/default.conf',
      'nginx/ssl/nginx.crt',
      'nginx/ssl/nginx.key',
      'nginx/ssl/ssl.conf',
    ]),
  );
});

test('both exports load from the installed package', async () => {
  const { stdout } = await run(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      "const g = await import('authenticating-gateway'); const t = await import('authenticating-gateway/testcontainers');" +
        'console.log(typeof g.renderConfigDir, typeof g.parseSettings, typeof t.GatewayContainer, typeof t.GatewayStartError);',
    ],
    { cwd: consumer },
  );
  expect(stdout.trim()).toBe('function function function function');
});

test("the example's own test passes against the installed package", async () => {
  const result = await run(join(consumer, 'node_modules/.bin/vitest'), ['run'], {
    cwd: consumer,
    env: { ...process.env, CI_REPORT_DIR: '', NO_COLOR: '1', FORCE_COLOR: '0' },
    maxBuffer: 16 * 1024 * 1024,
  }).catch((err: { stdout?: string; stderr?: string; message: string }) => {
    throw new Error(
      `the example's test failed:\n${err.stdout ?? ''}\n${err.stderr ?? err.message}`,
    );
  });
  expect(stripVTControlCharacters(result.stdout)).toMatch(/Tests\s+3 passed \(3\)/);
}, 300_000);

test("the README's install command works in an empty project (issue 42)", async () => {
  const readme = await readFile(join(ROOT, 'README.md'), 'utf8');
  const line =
    /^npm install --save-dev \/path\/to\/(\S+\.tgz) testcontainers@11 vitest@3(?=\s)/m.exec(readme);
  expect(line, 'the install line of "Testing your application"').not.toBeNull();
  const [command, tarball] = line! as unknown as [string, string];
  expect((await readdir(work)).includes(tarball), `npm pack made ${tarball}`).toBe(true);
  const project = join(work, 'readme-project');
  await mkdir(project);
  await run('npm', ['init', '-y'], { cwd: project });
  // The README's line as written, with /path/to/ the folder npm pack wrote into.
  const args = command.replace('/path/to/', `${work}/`).split(' ').slice(1);
  await run('npm', args, { cwd: project, maxBuffer: 16 * 1024 * 1024 });
  const manifest = JSON.parse(await readFile(join(project, 'package.json'), 'utf8')) as {
    devDependencies: Record<string, string>;
  };
  expect(Object.keys(manifest.devDependencies).sort()).toEqual([
    'authenticating-gateway',
    'testcontainers',
    'vitest',
  ]);
  const { stdout } = await run(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      "console.log(typeof (await import('authenticating-gateway/testcontainers')).GatewayContainer)",
    ],
    { cwd: project },
  );
  expect(stdout.trim()).toBe('function');
}, 300_000);
