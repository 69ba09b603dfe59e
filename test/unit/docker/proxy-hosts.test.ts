import { execFile } from 'node:child_process';
import { createSocket, type Socket } from 'node:dgram';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';

/**
 * docker/proxy-hosts.mjs against two DNS servers on loopback that stand for podman's per-network
 * dnsmasq: each knows only its own network's names and says "no such name" for the others.
 */

const SCRIPT = join(import.meta.dirname, '../../../docker/proxy-hosts.mjs');
const servers: Socket[] = [];
let dir = '';

/** A DNS server answering A queries for `names`, NXDOMAIN for anything else. */
async function dnsServer(names: Record<string, string>): Promise<string> {
  const socket = createSocket('udp4');
  socket.on('message', (query, peer) => {
    let offset = 12;
    const labels: string[] = [];
    while (query[offset]! > 0) {
      labels.push(query.subarray(offset + 1, offset + 1 + query[offset]!).toString());
      offset += query[offset]! + 1;
    }
    const question = query.subarray(12, offset + 5);
    const address = names[labels.join('.')];
    const header = Buffer.alloc(12);
    query.copy(header, 0, 0, 2);
    header.writeUInt16BE(address ? 0x8180 : 0x8183, 2);
    header.writeUInt16BE(1, 4);
    header.writeUInt16BE(address ? 1 : 0, 6);
    const answer = address
      ? Buffer.concat([
          Buffer.from([0xc0, 0x0c, 0, 1, 0, 1, 0, 0, 0, 5, 0, 4]),
          Buffer.from(address.split('.').map(Number)),
        ])
      : Buffer.alloc(0);
    socket.send(Buffer.concat([header, question, answer]), peer.port, peer.address);
  });
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  servers.push(socket);
  return `127.0.0.1:${socket.address().port}`;
}

function run(hosts: string, resolv: string, names: string[]): Promise<string> {
  return new Promise((resolve, reject) =>
    execFile(
      process.execPath,
      [SCRIPT, ...names],
      { env: { ...process.env, PROXY_HOSTS_FILE: hosts, PROXY_RESOLV_FILE: resolv } },
      (err, _out, stderr) => (err ? reject(err) : resolve(stderr)),
    ),
  );
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'proxy-hosts-'));
});
afterAll(async () => {
  for (const s of servers) s.close();
  await rm(dir, { recursive: true, force: true });
});

describe('proxy-hosts', () => {
  test('a name only the second server knows goes into a marked block; one the first knows stays with DNS', async () => {
    const back = await dnsServer({ 'gw-sidecar-test': '10.0.1.2' });
    const front = await dnsServer({ 'gw-app-test': '10.0.0.3' });
    const hosts = join(dir, 'hosts');
    const resolv = join(dir, 'resolv.conf');
    // Node's resolver takes host:port; resolv.conf's syntax has no port, but the script reads
    // each nameserver line as given.
    await writeFile(resolv, `nameserver ${back}\nnameserver ${front}\n`);
    await writeFile(hosts, '127.0.0.1\tlocalhost\n');
    await run(hosts, resolv, ['gw-app-test', 'gw-sidecar-test']);
    const written = await readFile(hosts, 'utf8');
    expect(written).toMatch(
      /^127\.0\.0\.1\tlocalhost\n# proxy-hosts: .*\n10\.0\.0\.3\tgw-app-test\n# proxy-hosts: end\n$/,
    );
    expect(written).not.toContain('gw-sidecar-test');
    // Idempotent: a second run leaves the file as it is.
    await run(hosts, resolv, ['gw-app-test', 'gw-sidecar-test']);
    expect(await readFile(hosts, 'utf8')).toBe(written);
    // The order changed: the first server knows gw-app-test (its line goes, DNS answers), and
    // gw-sidecar-test is now the second's only (in).
    await writeFile(resolv, `nameserver ${front}\nnameserver ${back}\n`);
    await run(hosts, resolv, ['gw-app-test', 'gw-sidecar-test']);
    const swapped = await readFile(hosts, 'utf8');
    expect(swapped).toContain('10.0.1.2\tgw-sidecar-test');
    expect(swapped).not.toContain('gw-app-test');
  });

  test('a name no server knows right now keeps its last addresses', async () => {
    const back = await dnsServer({});
    const front = await dnsServer({ 'gw-moving-test': '10.0.0.9' });
    const hosts = join(dir, 'hosts-2');
    const resolv = join(dir, 'resolv-2.conf');
    await writeFile(hosts, '127.0.0.1\tlocalhost\n');
    await writeFile(resolv, `nameserver ${back}\nnameserver ${front}\n`);
    await run(hosts, resolv, ['gw-moving-test']);
    const written = await readFile(hosts, 'utf8');
    expect(written).toContain('10.0.0.9\tgw-moving-test');
    await writeFile(resolv, `nameserver ${back}\n`);
    await run(hosts, resolv, ['gw-moving-test']);
    expect(await readFile(hosts, 'utf8')).toBe(written);
  });
});
