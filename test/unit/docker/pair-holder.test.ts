import { type ChildProcess, spawn } from 'node:child_process';
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, test } from 'vitest';

/**
 * docker/pair-holder.sh on a resolv.conf of its own, with a lookup that stands for the C
 * library under podman's CNI dnsname plugin: `database` resolves only while it is "up" and the
 * first listed server is the `back` network's (10.89.0.1).
 */

const SCRIPT = join(import.meta.dirname, '../../../docker/pair-holder.sh');
const PODMAN = [
  'search dns.podman dns.podman',
  'nameserver 10.89.1.1',
  'nameserver 10.89.0.1',
  'nameserver 10.255.255.53',
  'options timeout:1 attempts:5',
  '',
].join('\n');
let dir = '';
let holder: ChildProcess | undefined;
let stderr = '';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'gw-pair-holder-'));
  const lookup = join(dir, 'lookup.sh');
  await writeFile(
    lookup,
    `#!/bin/bash\n[[ -e ${dir}/up ]] && grep -m1 '^nameserver' ${dir}/resolv.conf | grep -q ' 10.89.0.1$'\n`,
  );
  await chmod(lookup, 0o755);
  stderr = '';
});

afterEach(async () => {
  holder?.kill('SIGTERM');
  holder = undefined;
  await rm(dir, { recursive: true, force: true });
});

function start(resolv: string) {
  return writeFile(join(dir, 'resolv.conf'), resolv).then(() => {
    holder = spawn('bash', [SCRIPT, 'database'], {
      env: {
        ...process.env,
        PAIR_RESOLV_FILE: join(dir, 'resolv.conf'),
        PAIR_LOOKUP: join(dir, 'lookup.sh'),
        PAIR_HOLDER_INTERVAL: '0.1',
      },
    });
    holder.stderr!.on('data', (c: Buffer) => {
      stderr += c.toString();
    });
  });
}

const resolv = () => readFile(join(dir, 'resolv.conf'), 'utf8');
async function until(check: () => Promise<boolean>) {
  const deadline = Date.now() + 5_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('not within 5 s');
    await sleep(50);
  }
}

test("the database's server is listed first once the database resolves there; nothing else moves", async () => {
  await start(PODMAN);
  await sleep(400);
  // Not up yet: no order makes it resolve, the file stays as the engine wrote it.
  expect(await resolv()).toBe(PODMAN);
  await writeFile(join(dir, 'up'), '');
  await until(async () => (await resolv()).includes('nameserver 10.89.0.1\nnameserver 10.89.1.1'));
  expect(await resolv()).toBe(
    [
      'search dns.podman dns.podman',
      'nameserver 10.89.0.1',
      'nameserver 10.89.1.1',
      'nameserver 10.255.255.53',
      'options timeout:1 attempts:5',
      '',
    ].join('\n'),
  );
  // The holder says so after it rewrote the file; its line may reach us a moment later.
  await until(async () => /database is known to DNS server 10\.89\.0\.1 only/.test(stderr));
  expect(stderr).toMatch(/database is known to DNS server 10\.89\.0\.1 only/);
});

test('a database that stops later reorders nothing; a file the engine rewrites is settled again', async () => {
  await writeFile(join(dir, 'up'), '');
  await start(PODMAN);
  await until(async () =>
    (await resolv()).startsWith('search dns.podman dns.podman\nnameserver 10.89.0.1'),
  );
  const settled = await resolv();
  await rm(join(dir, 'up'));
  await sleep(500);
  expect(await resolv()).toBe(settled);
  // The engine writes the file again (a network connected later), the database up again.
  await writeFile(join(dir, 'resolv.conf'), 'nameserver 10.89.1.1\nnameserver 10.89.0.1\n');
  await writeFile(join(dir, 'up'), '');
  await until(async () => (await resolv()) === 'nameserver 10.89.0.1\nnameserver 10.89.1.1\n');
});

test('an order that already resolves (one resolver for every network, as Docker has) is left alone', async () => {
  const docker = 'nameserver 127.0.0.11\noptions ndots:0\n';
  await writeFile(join(dir, 'lookup.sh'), '#!/bin/bash\nexit 0\n');
  await start(docker);
  await sleep(400);
  expect(await resolv()).toBe(docker);
  expect(stderr).toBe('');
});
