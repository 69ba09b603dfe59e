import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, test } from 'vitest';
import { runningDnsmasq, stopOrphanDnsmasq } from '../../support/orphan-dns.js';

/**
 * The container suite's stop of dnsmasq processes left by removed networks, on a folder laid
 * out as podman's CNI dnsname plugin lays out /run/containers/cni/dnsname. The "dnsmasq" are
 * stand-in processes whose command line is the plugin's (`-u root --conf-file=<folder>/...`):
 * a real one would need root, a bridge and the plugin.
 */

let root = '';
const children: ChildProcess[] = [];

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'gw-dnsname-'));
});

afterEach(async () => {
  for (const child of children.splice(0)) child.kill('SIGKILL');
  await rm(root, { recursive: true, force: true });
});

/** A network's folder; `pid` is what its pidfile says (a stand-in dnsmasq when 'start'). */
async function network(name: string, pid: number | 'start' | undefined): Promise<number> {
  const folder = join(root, name);
  await mkdir(folder);
  await writeFile(join(folder, 'dnsmasq.conf'), `interface=cni-podman3\nbind-dynamic\n`);
  await writeFile(join(folder, 'addnhosts'), '10.89.2.2\tgateway\n');
  let written = pid;
  if (pid === 'start') {
    const conf = `--conf-file=${join(folder, 'dnsmasq.conf')}`;
    const child = spawn(
      process.execPath,
      ['-e', 'setInterval(() => {}, 1000)', '--', '-u', 'root', conf],
      { stdio: 'ignore' },
    );
    children.push(child);
    written = child.pid!;
  }
  if (written !== undefined) await writeFile(join(folder, 'pidfile'), `${written}\n`);
  return typeof written === 'number' ? written : 0;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function until(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 100 && !condition(); i++) await new Promise((r) => setTimeout(r, 20));
}

test('a dnsmasq is one when its pidfile names a live process started with its folder’s configuration', async () => {
  const live = await network('gw-live', 'start');
  await network('gw-dead', 999_999_999);
  await network('gw-reused', process.pid); // a live pid, but not a dnsmasq of this folder
  await network('gw-starting', undefined); // no pidfile yet
  await writeFile(join(root, 'gw-live', 'unrelated'), '');

  expect(runningDnsmasq(root)).toEqual([
    { network: 'gw-live', pid: live, folder: join(root, 'gw-live') },
  ]);
  expect(runningDnsmasq(join(root, 'missing'))).toEqual([]);
});

test('only the dnsmasq of a network that is gone is stopped, and its folder removed', async () => {
  const kept = await network('gwtest-1-replicas_back', 'start');
  const orphan = await network('gwtest-1-replicas_front', 'start');
  const foreign = await network('gwtest-2_front', process.pid);

  const stopped = await stopOrphanDnsmasq(async () => ['podman', 'gwtest-1-replicas_back'], root);

  expect(stopped.map((s) => [s.network, s.pid])).toEqual([['gwtest-1-replicas_front', orphan]]);
  await until(() => !alive(orphan));
  expect(alive(orphan)).toBe(false);
  expect(existsSync(join(root, 'gwtest-1-replicas_front'))).toBe(false);
  expect(alive(kept)).toBe(true);
  expect(existsSync(join(root, 'gwtest-1-replicas_back', 'pidfile'))).toBe(true);
  // Not a dnsmasq: neither signalled nor its folder touched.
  expect(foreign).toBe(process.pid);
  expect(existsSync(join(root, 'gwtest-2_front', 'pidfile'))).toBe(true);
});

test('the networks are listed after the processes, and not at all when none runs', async () => {
  let listed = 0;
  const none = await stopOrphanDnsmasq(async () => {
    listed++;
    return [];
  }, root);
  expect(none).toEqual([]);
  expect(listed).toBe(0);

  const made = await network('gw-made-meanwhile', 'start');
  const stopped = await stopOrphanDnsmasq(async () => {
    listed++;
    return ['gw-made-meanwhile'];
  }, root);
  expect(stopped).toEqual([]);
  expect(listed).toBe(1);
  expect(alive(made)).toBe(true);
});
