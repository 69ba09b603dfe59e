import { execFileSync, spawn } from 'node:child_process';
import { cpSync, existsSync } from 'node:fs';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, expect, test } from 'vitest';
import { freePort } from '../../native/ports.js';

// The README's run command on a fresh checkout: no node_modules, no dist. `npm start` sets
// itself up (its prestart step: npm dependencies; Debian packages, which are present here)
// and reaches "Gateway ready". The checkout is this work tree's files as git sees them
// (committed or not), without anything ignored, so it tests what would be committed.

const ROOT = join(import.meta.dirname, '..', '..');
let scratch: string | undefined;

afterAll(async () => {
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

test('npm start on a checkout without node_modules reaches "Gateway ready"', async () => {
  scratch = await mkdtemp(join(tmpdir(), 'gw-fresh-'));
  // As root, PostgreSQL and nginx's workers run as other users: let them in.
  await chmod(scratch, 0o755);
  const clone = join(scratch, 'clone');
  const files = execFileSync(
    'git',
    ['ls-files', '-z', '--cached', '--others', '--exclude-standard'],
    { cwd: ROOT, encoding: 'utf8' },
  )
    .split('\0')
    .filter((f) => f !== '' && existsSync(join(ROOT, f)));
  for (const file of files) cpSync(join(ROOT, file), join(clone, file), { recursive: true });
  expect(existsSync(join(clone, 'node_modules'))).toBe(false);
  expect(existsSync(join(clone, 'dist'))).toBe(false);

  const port = await freePort();
  const started = Date.now();
  // Its own process group, as a terminal would start it: Ctrl-C is SIGINT to the group.
  const npm = spawn('npm', ['start'], {
    cwd: clone,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      PATH: `${dirname(process.execPath)}:${process.env.PATH}`,
      HOME: process.env.HOME,
      API_KEY_CREATE: 'true',
      GATEWAY_HTTPS_PORT: String(port),
      // Like the HTTPS port: a free one, so a gateway already running here is no obstacle.
      METRICS_LISTEN: `127.0.0.1:${await freePort()}`,
    },
  });
  let output = '';
  npm.stdout.on('data', (d: Buffer) => {
    output += d.toString();
  });
  npm.stderr.on('data', (d: Buffer) => {
    output += d.toString();
  });
  const exited = new Promise<number | null>((resolve) => npm.on('exit', (code) => resolve(code)));
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setInterval(() => {
        if (output.includes('Gateway ready: ')) {
          clearInterval(timer);
          resolve();
        } else if (npm.exitCode !== null || Date.now() - started > 420_000) {
          clearInterval(timer);
          reject(new Error(`no "Gateway ready" (exit ${npm.exitCode}):\n${output}`));
        }
      }, 200);
    });
    console.info(
      `fresh checkout: npm start ready after ${((Date.now() - started) / 1000).toFixed(1)} s`,
    );
    expect(output).toMatch(/\[setup\] npm dependencies: npm install/);
    expect(output).toMatch(/NEWLY GENERATED API KEY: \d+\./);
    expect(output).toContain(`Gateway ready: https://localhost:${port}/`);
  } finally {
    if (npm.exitCode === null) process.kill(-npm.pid!, 'SIGINT');
    const timer = setTimeout(() => process.kill(-npm.pid!, 'SIGKILL'), 30_000);
    await exited;
    clearTimeout(timer);
  }
}, 480_000);
