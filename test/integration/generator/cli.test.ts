import { execFile } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { LAYOUT } from '../../../generator/index.js';
import { NGINX } from './support/nginx.js';

// gateway-config as a real child process. vite-node runs the TypeScript entry point as is,
// so this needs no build; the compiled `dist/generator/cli.js` is the same module.
const ROOT = join(import.meta.dirname, '..', '..', '..');
const VITE_NODE = join(ROOT, 'node_modules', 'vite-node', 'vite-node.mjs');
const CLI = join(ROOT, 'generator', 'cli.ts');

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

let cwd: string;

function gatewayConfig(args: string[], env: Record<string, string> = {}): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [VITE_NODE, CLI, '--', ...args],
      // Only nginx's directory on the PATH, and no GATEWAY_* from the developer's shell.
      {
        cwd,
        env: { PATH: `${dirname(NGINX)}:${dirname(process.execPath)}:/usr/bin:/bin`, ...env },
      },
      (err, stdout, stderr) =>
        resolve({
          code: err ? Number(err.code ?? 1) : 0,
          stdout: String(stdout),
          stderr: String(stderr),
        }),
    );
  });
}

beforeAll(async () => {
  cwd = await mkdtemp(join(tmpdir(), 'gw-cli-'));
});
afterAll(async () => {
  await rm(cwd, { recursive: true, force: true });
});

describe('gateway-config', () => {
  test('--help prints the usage and exits 0', async () => {
    const run = await gatewayConfig(['--help']);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('Usage: gateway-config <command> <dir>');
    expect(run.stdout).toContain('GATEWAY_FQDN');
  });

  test('invalid settings: every problem listed, exit 1, nothing written', async () => {
    await writeFile(
      join(cwd, 'bad.yaml'),
      [
        'fqdn: "gw.example.com}"',
        'tls:',
        '  protocols: [TLSv1.2, TLSv9]',
        '  ciphers: "HIGH;"',
        'upstreams:',
        '  app: "127.0.0.1:8080\\n"',
        'unknown_key: 1',
        '',
      ].join('\n'),
    );
    const run = await gatewayConfig(['render', 'out-bad', '--settings', 'bad.yaml']);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('5 problems');
    for (const path of [
      'fqdn:',
      'tls.protocols[1]:',
      'tls.ciphers:',
      'upstreams.app:',
      'unknown_key:',
    ]) {
      expect(run.stderr).toContain(`  - ${path}`);
    }
    expect(existsSync(join(cwd, 'out-bad'))).toBe(false);
  });

  test('an invalid GATEWAY_FQDN fails ensure without touching the directory', async () => {
    const run = await gatewayConfig(['ensure', 'out-env'], { GATEWAY_FQDN: 'gw.example.com\nx' });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('fqdn (from GATEWAY_FQDN): must not contain a line break');
    expect(existsSync(join(cwd, 'out-env'))).toBe(false);
  });

  test('ensure with GATEWAY_FQDN, then check passes with nginx -t; a second ensure keeps all', async () => {
    const env = {
      GATEWAY_FQDN: 'gw.example.com',
      GATEWAY_HTTPS_PORT: '8443',
      // nginx -t binds the control socket, whose folder exists wherever nginx runs.
      GATEWAY_CONTROL_SOCKET: join(cwd, 'ctl.sock'),
    };
    const ensure = await gatewayConfig(['ensure', 'out'], env);
    expect(ensure.code).toBe(0);
    expect(ensure.stdout).toContain('wrote');
    const certificatePem = await readFile(join(cwd, 'out', LAYOUT.certificate), 'utf8');
    const cert = new X509Certificate(certificatePem);
    expect(cert.subjectAltName).toBe('DNS:gw.example.com');
    const defaultConf = await readFile(join(cwd, 'out', LAYOUT.defaultConf), 'utf8');
    expect(defaultConf).toContain('listen 8443 ssl http2;');
    // config_dir defaults to the target directory itself.
    expect(defaultConf).toContain(`include "${join(cwd, 'out', LAYOUT.sslConf)}";`);

    const check = await gatewayConfig(['check', 'out'], env);
    expect(check.stderr).toBe('');
    expect(check.stdout).toContain('OK (nginx -t passed)');
    expect(check.code).toBe(0);

    const again = await gatewayConfig(['ensure', 'out'], env);
    expect(again.stdout).not.toContain('wrote');
    expect(await readFile(join(cwd, 'out', LAYOUT.certificate), 'utf8')).toBe(certificatePem);
  });

  test('check fails with exit 1 when the certificate does not carry the FQDN', async () => {
    await gatewayConfig(['ensure', 'out-fqdn'], { GATEWAY_FQDN: 'a.example.com' });
    const run = await gatewayConfig(['check', 'out-fqdn'], { GATEWAY_FQDN: 'b.example.com' });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(
      `${join(cwd, 'out-fqdn', LAYOUT.certificate)}: common name is "a.example.com"`,
    );
  });

  test('main-conf writes the main nginx.conf for a runtime directory', async () => {
    const run = await gatewayConfig([
      'main-conf',
      'run',
      '--error-log',
      'stderr',
      '--access-log',
      'off',
    ]);
    expect(run.code).toBe(0);
    const text = await readFile(join(cwd, 'run', 'nginx.conf'), 'utf8');
    expect(text).toContain(`pid "${join(cwd, 'run', 'nginx.pid')}";`);
    expect(text).toContain('include "/etc/config/nginx/conf.d/*.conf";');
    expect(run.stdout).toContain(`-c ${join(cwd, 'run', 'nginx.conf')}`);
  });

  test('render over files that would change: refused with the lines it would drop; --force replaces and says so', async () => {
    expect((await gatewayConfig(['render', 'out-edit'])).code).toBe(0);
    const sslConf = join(cwd, 'out-edit', LAYOUT.sslConf);
    const edited = (await readFile(sslConf, 'utf8')).replace(
      /^ssl_protocols [^;]+;/m,
      'ssl_protocols TLSv1.3;',
    );
    await writeFile(sslConf, edited);
    // The same settings again: only the edit differs.
    const refused = await gatewayConfig(['render', 'out-edit']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('nothing was written');
    expect(refused.stderr).toContain(`${sslConf}:`);
    expect(refused.stderr).toContain('- ssl_protocols TLSv1.3;');
    expect(refused.stderr).toMatch(/\+ ssl_protocols TLSv1\.2 TLSv1\.3;/);
    expect(await readFile(sslConf, 'utf8')).toBe(edited);

    const forced = await gatewayConfig(['render', 'out-edit', '--force']);
    expect(forced.code).toBe(0);
    expect(forced.stdout).toContain('- ssl_protocols TLSv1.3;');
    expect(await readFile(sslConf, 'utf8')).not.toBe(edited);
    // Unchanged files are no reason to refuse.
    expect((await gatewayConfig(['render', 'out-edit'])).code).toBe(0);
  });

  test('a native home: render keeps its sockets, check names a default.conf that lost them', async () => {
    const config = join(cwd, 'home', 'config');
    const home = {
      configDir: config,
      sidecar: `unix:${join(cwd, 'home/run/sidecar.sock')}`,
      app: '127.0.0.1:3000',
      controlSocket: join(cwd, 'home/run/nginx-control.sock'),
      httpsPort: 8443,
    };
    await gatewayConfig(['ensure', config]);
    // A default.conf for containers, as render wrote it before it knew native homes.
    const containerConf = await readFile(join(config, LAYOUT.defaultConf), 'utf8');
    await writeFile(join(cwd, 'home', 'native-home.json'), JSON.stringify(home));
    const check = await gatewayConfig(['check', config]);
    expect(check.code).toBe(1);
    expect(check.stderr).toContain(
      `the sidecar (upstream gateway_sidecar) is 127.0.0.1:8081, but the native run's sidecar is at ${home.sidecar}`,
    );
    expect(check.stderr).toContain('the app (upstream gateway_app) is 127.0.0.1:8080');
    expect(check.stderr).toContain(`gateway-config render ${config} --force`);

    const render = await gatewayConfig(['render', config, '--force']);
    expect(render.code).toBe(0);
    expect(render.stdout).toContain("native home's configuration");
    const conf = await readFile(join(config, LAYOUT.defaultConf), 'utf8');
    expect(conf).not.toBe(containerConf);
    expect(conf).toContain(`server ${home.sidecar};`);
    expect(conf).toContain('server 127.0.0.1:3000;');
    expect(conf).toContain(`listen "unix:${home.controlSocket}";`);
    expect(conf).toContain('listen 8443 ssl');
  });

  test('usage errors exit 2', async () => {
    expect((await gatewayConfig(['render'])).code).toBe(2);
    expect((await gatewayConfig(['publish', 'out'])).code).toBe(2);
    expect((await gatewayConfig(['render', 'out', '--colour', 'blue'])).code).toBe(2);
  });
});
