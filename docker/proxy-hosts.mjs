// proxy-hosts NAME...: makes each upstream host name resolvable in this container, when only
// one of its networks' DNS servers knows it.
//
// The proxy is on two networks (docker-compose.yml: `front` with the application, `back` with
// the sidecar). Docker's resolver, Kubernetes' and podman's aardvark-dns answer for every
// network a container is on; podman's CNI dnsname plugin (docker/setup-podman.sh) runs one
// dnsmasq per network, lists them all in /etc/resolv.conf, and the C library stops at the first
// one's "no such name": the names of the second network do not resolve. For such a name this
// asks each listed server on its own and keeps the answer in a marked block of /etc/hosts,
// which nginx, getaddrinfo and the upstream watcher read first; a name the first server knows
// is left to DNS (and its block line removed). Run by the entrypoint before nginx starts and
// by docker/proxy-upstream-watch.sh while the block exists. Never fails the caller: a
// /etc/hosts it cannot write is reported on stderr.
import { lookup, Resolver } from 'node:dns/promises';
import { readFileSync, writeFileSync } from 'node:fs';

const HOSTS = process.env.PROXY_HOSTS_FILE || '/etc/hosts';
const RESOLV = process.env.PROXY_RESOLV_FILE || '/etc/resolv.conf';
const BEGIN = '# proxy-hosts: names only another network’s DNS knows (docker/proxy-hosts.mjs)';
const END = '# proxy-hosts: end';

const names = process.argv.slice(2).filter((n) => /^[A-Za-z0-9][A-Za-z0-9.-]*$/.test(n));
const text = readFileSync(HOSTS, 'utf8');
const begin = text.indexOf(`${BEGIN}\n`);
const end = begin < 0 ? -1 : text.indexOf(`${END}\n`, begin);
const outside =
  begin < 0 || end < 0 ? text : text.slice(0, begin) + text.slice(end + END.length + 1);
const managed = new Map();
if (begin >= 0 && end >= 0)
  for (const line of text.slice(begin + BEGIN.length + 1, end).split('\n')) {
    const [address, name] = line.trim().split(/\s+/);
    if (address && name) managed.set(name, [...(managed.get(name) ?? []), address]);
  }
const servers = [...readFileSync(RESOLV, 'utf8').matchAll(/^nameserver\s+(\S+)/gm)].map(
  (m) => m[1],
);

/** The first server (in resolv.conf's order) that knows `name`: its index and addresses. */
async function ask(name) {
  for (const [index, server] of servers.entries()) {
    const resolver = new Resolver({ timeout: 1000, tries: 2 });
    resolver.setServers([server]);
    const addresses = await resolver.resolve4(name).catch(() => []);
    if (addresses.length) return { index, addresses: addresses.sort() };
  }
  return null;
}

const next = new Map();
for (const name of names) {
  if (!managed.has(name)) {
    const native = await lookup(name, { family: 4 }).then(
      () => true,
      () => false,
    );
    if (native) continue;
  }
  const found = await ask(name);
  if (!found) {
    // Not resolvable anywhere right now (being recreated): keep what was known.
    if (managed.has(name)) next.set(name, managed.get(name));
    continue;
  }
  if (found.index === 0) continue; // the C library finds it: DNS, not this file
  next.set(name, found.addresses);
}

const lines = [...next].flatMap(([name, addresses]) => addresses.map((a) => `${a}\t${name}`));
const block = lines.length ? `${BEGIN}\n${lines.join('\n')}\n${END}\n` : '';
const wanted = block
  ? (outside.endsWith('\n') || !outside ? outside : `${outside}\n`) + block
  : outside;
if (wanted !== text) {
  try {
    // In place: /etc/hosts is a file the engine mounts, it cannot be replaced by a rename.
    writeFileSync(HOSTS, wanted);
    if (lines.length) console.error(`proxy-hosts: ${lines.join(', ').replaceAll('\t', ' ')}`);
  } catch (err) {
    console.error(`proxy-hosts: cannot write ${HOSTS} (${err.message}); names: ${names.join(' ')}`);
  }
}
