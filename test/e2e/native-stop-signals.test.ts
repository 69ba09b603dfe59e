import { once } from 'node:events';
import { chmod, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { freePort } from '../../native/ports.js';
import { startProcess } from '../support/process.js';

// Issue 42: a supervisor (systemd, a shell script) stops the native run by signalling the
// process it started, `npm start`, not a terminal's whole process group. SIGTERM and SIGINT to
// that npm process must stop every process of the run and free the port.
// `--ignore-scripts` skips only the set-up step (prestart; fresh-clone.test.ts runs it): here
// the machine is set up, and a set-up would reinstall the shared node_modules.

const ROOT = join(import.meta.dirname, '..', '..');

/** Every live process whose environment names this home (the runner and all it started). */
async function processesOf(home: string): Promise<number[]> {
  const found: number[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const environ = await readFile(`/proc/${entry}/environ`, 'latin1').catch(() => '');
    if (environ.split('\0').includes(`GATEWAY_HOME=${home}`) && (await alive(Number(entry))))
      found.push(Number(entry));
  }
  return found;
}

/** Running, and not a zombie waiting for a parent that never reaps it. */
async function alive(pid: number): Promise<boolean> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => null);
  return stat !== null && stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
}

/** The processes `roots` started, and theirs (nginx's workers, PostgreSQL's backends). */
async function withDescendants(roots: number[]): Promise<number[]> {
  const parents = new Map<number, number>();
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = await readFile(`/proc/${entry}/stat`, 'utf8').catch(() => null);
    if (stat)
      parents.set(Number(entry), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
  }
  const all = new Set(roots);
  for (let grew = true; grew; ) {
    grew = false;
    for (const [pid, parent] of parents) {
      if (all.has(parent) && !all.has(pid)) {
        all.add(pid);
        grew = true;
      }
    }
  }
  return [...all];
}

async function pidFiles(home: string): Promise<number[]> {
  const run = join(home, 'run');
  const names = (await readdir(run)).filter((name) => name.endsWith('.pid'));
  return await Promise.all(
    names.map(async (name) => Number((await readFile(join(run, name), 'utf8')).trim())),
  );
}

async function portFree(port: number): Promise<boolean> {
  const server = createServer();
  try {
    server.listen(port, '0.0.0.0');
    await once(server, 'listening');
    return true;
  } catch {
    return false;
  } finally {
    server.close();
  }
}

for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  test(`${signal} to the npm start process stops every process of the run and frees the port`, async () => {
    const home = await mkdtemp(join(tmpdir(), 'gw-sig-'));
    await chmod(home, 0o755);
    const port = await freePort();
    const npm = startProcess(
      'npm',
      ['start', '--ignore-scripts'],
      {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        GATEWAY_HOME: home,
        GATEWAY_HTTPS_PORT: String(port),
        METRICS_LISTEN: `127.0.0.1:${await freePort()}`,
      },
      ROOT,
    );
    let children: number[] = [];
    try {
      await npm.waitFor(/Gateway ready: /, 180_000);
      children = await pidFiles(home); // postgres, sidecar, app, nginx
      expect(children).toHaveLength(4);
      // nginx clears its environment: it is found by its pid file, its workers as its children.
      const before = await withDescendants([...(await processesOf(home)), ...children]);
      expect(before.length).toBeGreaterThan(children.length);

      const exited = once(npm.child, 'exit');
      process.kill(npm.child.pid!, signal);
      const [code] = await exited;
      expect(npm.stdout()).toContain(`Stopping (${signal})...`);
      expect(code).toBe(0);
      expect(await processesOf(home)).toEqual([]);
      for (const pid of [...children, ...before]) expect(await alive(pid)).toBe(false);
      expect(await portFree(port)).toBe(true);
    } finally {
      if (npm.child.exitCode === null) await npm.stop('SIGKILL');
      // Whatever a failed run left behind, nginx and its workers included.
      for (const pid of await withDescendants([...(await processesOf(home)), ...children]))
        if (await alive(pid)) process.kill(pid, 'SIGKILL');
      await rm(home, { recursive: true, force: true });
    }
  }, 240_000);
}
