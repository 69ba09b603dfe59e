import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chown, mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import {
  LAYOUT,
  loadSettings,
  type PreparedProxy,
  PrepareError,
  prepareProxy,
  readServerConf,
} from '../../../generator/index.js';
import { NGINX } from './support/nginx.js';

// `gateway-config prepare`: the proxy's one start-up step, natively and in the container.

const ROOT = join(import.meta.dirname, '..', '..', '..');
const VITE_NODE = join(ROOT, 'node_modules', 'vite-node', 'vite-node.mjs');
const CLI = join(ROOT, 'generator', 'cli.ts');
let scratch: string;

beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'gw-prepare-'));
});
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

async function fresh(name: string) {
  const configDir = join(scratch, name, 'config');
  const runtimeDir = join(scratch, name, 'run');
  const settings = await loadSettings({
    env: { GATEWAY_HTTPS_PORT: '9443' },
    defaults: { config_dir: configDir },
    // A folder that does not exist yet: prepare makes it before nginx -t binds the socket.
    overrides: { auth_cache: { control_socket: join(scratch, name, 'control', 'nginx.sock') } },
  });
  return { configDir, runtimeDir, settings };
}

describe('prepareProxy', () => {
  test('a first start completes the directory and answers what the proxy needs', async () => {
    const { configDir, runtimeDir, settings } = await fresh('first');
    const prepared = await prepareProxy({ configDir, settings, runtimeDir, nginx: NGINX });
    expect(prepared.httpsPort).toBe(9443);
    expect(prepared.url).toBe('https://localhost:9443/');
    expect(prepared.mainConf).toBe(join(runtimeDir, 'nginx.conf'));
    expect(await readFile(prepared.mainConf, 'utf8')).toContain(
      `include "${configDir}/nginx/conf.d/*.conf"`,
    );
    expect(prepared.nginxArgs).toEqual([
      '-p',
      `${runtimeDir}/`,
      '-c',
      prepared.mainConf,
      '-e',
      'stderr',
    ]);
    expect(prepared.controlSocket).toBe(join(scratch, 'first', 'control', 'nginx.sock'));
    expect(existsSync(join(scratch, 'first', 'control'))).toBe(true);
    expect([...prepared.written].sort()).toEqual(
      [
        LAYOUT.defaultConf,
        LAYOUT.sslConf,
        LAYOUT.certificate,
        LAYOUT.key,
        LAYOUT.sidecarProof,
      ].sort(),
    );
    // A second start keeps everything.
    const again = await prepareProxy({ configDir, settings, runtimeDir, nginx: NGINX });
    expect(again.written).toEqual([]);
    expect(again.kept).toHaveLength(5);
  });

  test('the file rules: a hand-edited port is the port, and a different request is refused', async () => {
    const { configDir, runtimeDir, settings } = await fresh('edited');
    await prepareProxy({ configDir, settings, runtimeDir, nginx: NGINX });
    const conf = join(configDir, LAYOUT.defaultConf);
    await writeFile(conf, (await readFile(conf, 'utf8')).replace(/listen 9443 /, 'listen 9555 '));
    const prepared = await prepareProxy({ configDir, settings, runtimeDir, nginx: NGINX });
    expect(prepared.httpsPort).toBe(9555);
    const refused = await prepareProxy({
      configDir,
      settings,
      runtimeDir,
      nginx: NGINX,
      expectedHttpsPort: 9443,
    }).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(PrepareError);
    expect((refused as PrepareError).message).toMatch(
      /GATEWAY_HTTPS_PORT is 9443 but .*default\.conf listens on 9555/,
    );
  });

  test('a configuration nginx refuses stops the start, naming the file', async () => {
    const { configDir, runtimeDir, settings } = await fresh('broken');
    await prepareProxy({ configDir, settings, runtimeDir, nginx: NGINX });
    const conf = join(configDir, LAYOUT.defaultConf);
    await writeFile(conf, `${await readFile(conf, 'utf8')}\nno_such_directive on;\n`);
    await expect(prepareProxy({ configDir, settings, runtimeDir, nginx: NGINX })).rejects.toThrow(
      /nginx -t failed:[\s\S]*no_such_directive[\s\S]*default\.conf/,
    );
  });

  test.runIf(process.getuid?.() === 0)(
    'as root, files created in a folder someone else owns become theirs',
    async () => {
      const { configDir, runtimeDir, settings } = await fresh('owned');
      await mkdir(join(configDir, 'nginx/ssl'), { recursive: true });
      await chown(configDir, 1000, 1000);
      await prepareProxy({ configDir, settings, runtimeDir, nginx: NGINX });
      const owner = async (relative: string) => (await stat(join(configDir, relative))).uid;
      expect(await owner(LAYOUT.defaultConf)).toBe(1000);
      expect(await owner(LAYOUT.key)).toBe(1000);
      expect(await owner(LAYOUT.sslConf)).toBe(1000);
      expect(await owner('nginx/conf.d')).toBe(1000);
      // What was there keeps its owner (root made it).
      expect(await owner('nginx/ssl')).toBe(0);
    },
  );
});

describe('readServerConf', () => {
  test('finds the first ssl listen, every port and the unix sockets, ignoring comments', () => {
    const facts = readServerConf(
      [
        '# listen 1 ssl;',
        'server {',
        '    listen "unix:/run/a b/nginx.sock";',
        '    # listen unix:/commented.sock;',
        '}',
        'server {',
        '    listen 80;',
        '}',
        'server {',
        '    listen [::]:8443 ssl http2; # the gateway',
        '    listen 127.0.0.1:9443 ssl;',
        '}',
      ].join('\n'),
    );
    expect(facts).toEqual({
      httpsPort: 8443,
      listenPorts: [80, 8443, 9443],
      unixSockets: ['/run/a b/nginx.sock'],
      upstreams: {},
      sidecarVariable: null,
    });
    expect(readServerConf('server {\n    listen 80;\n}').httpsPort).toBeNull();
  });
});

describe('gateway-config prepare', () => {
  function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
    return new Promise((resolve) => {
      execFile(
        process.execPath,
        [VITE_NODE, CLI, '--', ...args],
        { env: { PATH: `${dirname(NGINX)}:${dirname(process.execPath)}:/usr/bin:/bin` } },
        (err, stdout, stderr) => resolve({ code: err ? Number(err.code ?? 1) : 0, stdout, stderr }),
      );
    });
  }

  test('prints JSON for programs and nginx arguments for the entrypoint', async () => {
    const dir = join(scratch, 'cli');
    const run = join(scratch, 'cli-run');
    const json = await cli(['prepare', dir, '--runtime-dir', run, '--user', 'www-data']);
    expect(json.code, json.stderr).toBe(0);
    const prepared = JSON.parse(json.stdout) as PreparedProxy;
    expect(prepared.httpsPort).toBe(443);
    expect(prepared.written).toHaveLength(5);
    expect(json.stderr).toContain('wrote');
    expect(await readFile(prepared.mainConf, 'utf8')).toMatch(/^user www-data;$/m);
    const lines = await cli(['prepare', dir, '--runtime-dir', run, '--nginx-args']);
    expect(lines.code, lines.stderr).toBe(0);
    expect(lines.stdout.trim().split('\n')).toEqual(prepared.nginxArgs);
    expect(existsSync(join(run, 'nginx.conf'))).toBe(true);
  });

  test('without --runtime-dir: a usage error', async () => {
    const run = await cli(['prepare', join(scratch, 'cli2')]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('prepare needs --runtime-dir');
  });
});
