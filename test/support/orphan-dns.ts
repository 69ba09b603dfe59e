import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Podman's CNI dnsname plugin (docker/setup-podman.sh) runs one dnsmasq per network, started on
 * its first container and stopped when its last container leaves. When a container goes without
 * the plugin's DEL (an engine restarted or killed mid-removal), that dnsmasq outlives its
 * network. It is started with `bind-dynamic` and `interface=cni-podmanN`, and podman reuses
 * bridge names: the orphan binds the next network's cni-podmanN address as soon as it appears,
 * and that network's own dnsmasq then fails ("failed to create listening socket for 10.89.2.1:
 * Address already in use"), so no container can join it. CI lost two container tests to this.
 * The suite stops such orphans before each file; any other engine has no such folder.
 */
export const DNSNAME_DIR = '/run/containers/cni/dnsname';

export interface DnsmasqInstance {
  /** The network's name: the plugin names its folder after it. */
  readonly network: string;
  readonly pid: number;
  readonly folder: string;
}

function readOr(path: string, fallback: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return fallback;
  }
}

/**
 * The plugin's dnsmasq processes that are running: a folder's pidfile names a live process whose
 * command line is dnsmasq with that folder's configuration (a pid reused by anything else is not
 * one of them).
 */
export function runningDnsmasq(root = DNSNAME_DIR): DnsmasqInstance[] {
  let names: string[];
  try {
    names = readdirSync(root);
  } catch {
    return [];
  }
  const found: DnsmasqInstance[] = [];
  for (const network of names) {
    const folder = join(root, network);
    const pid = Number.parseInt(readOr(join(folder, 'pidfile'), '').trim(), 10);
    if (!Number.isSafeInteger(pid) || pid <= 0) continue;
    const argv = readOr(`/proc/${pid}/cmdline`, '').split('\0');
    const conf = join(folder, 'dnsmasq.conf');
    if (argv.some((arg) => arg === `--conf-file=${conf}`)) found.push({ network, pid, folder });
  }
  return found;
}

/**
 * Stops every running dnsmasq whose network is not among `networks` (listed after the processes,
 * so that a network made meanwhile cannot be taken for gone), and removes its folder, as the
 * plugin's own DEL would. Returns what it stopped, for the log.
 */
export async function stopOrphanDnsmasq(
  listNetworks: () => Promise<Iterable<string>>,
  root = DNSNAME_DIR,
): Promise<DnsmasqInstance[]> {
  const running = runningDnsmasq(root);
  if (running.length === 0) return [];
  const networks = new Set(await listNetworks());
  const orphans = running.filter((instance) => !networks.has(instance.network));
  for (const orphan of orphans) {
    try {
      process.kill(orphan.pid, 'SIGTERM');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ESRCH') throw err;
    }
    rmSync(orphan.folder, { recursive: true, force: true });
  }
  return orphans;
}
