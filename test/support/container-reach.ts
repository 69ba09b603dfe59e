import type { ContainerRuntimeClient } from 'testcontainers';

type Docker = ContainerRuntimeClient['container']['dockerode'];

/**
 * What a container of a composition can reach: TCP connects made from inside it (with its
 * own node), for the segmentation checks of docker-compose.yml and docker-compose.replicas.yml
 * (docs/security.md). Each target ends as `open`, or as why not: `ECONNREFUSED`,
 * `EHOSTUNREACH`, `ENOTFOUND` (the name is not on its networks), `timeout`...
 */

const PROBE = `
const net = require('node:net');
const targets = JSON.parse(process.argv[1]);
Promise.all(targets.map(([host, port]) => new Promise((done) => {
  const s = net.connect({ host, port, timeout: 3000 });
  s.on('connect', () => { s.destroy(); done('open'); });
  s.on('timeout', () => { s.destroy(); done('timeout'); });
  s.on('error', (e) => done(e.code || e.message));
}))).then((r) => console.log(JSON.stringify(r)));
`;

export type Target = readonly [host: string, port: number];

/** `exec` runs a command in the container (e.g. `compose exec -T app ...`), giving its stdout. */
export async function reachFrom(
  exec: (command: string[]) => Promise<string>,
  targets: readonly Target[],
): Promise<Record<string, string>> {
  const out = await exec(['node', '-e', PROBE, JSON.stringify(targets)]);
  const results = JSON.parse(out.trim().split('\n').pop() ?? '[]') as string[];
  return Object.fromEntries(targets.map(([host, port], i) => [`${host}:${port}`, results[i]!]));
}

/** A service's address on each of its networks, by the network's name without the project. */
export async function addressesOf(
  docker: Docker,
  project: string,
  service: string,
): Promise<Record<string, string>> {
  const filters = JSON.stringify({
    label: [`com.docker.compose.project=${project}`, `com.docker.compose.service=${service}`],
  });
  const [info] = await docker.listContainers({ filters });
  if (!info) throw new Error(`no running container of ${service}`);
  const inspect = await docker.getContainer(info.Id).inspect();
  return Object.fromEntries(
    Object.entries(inspect.NetworkSettings.Networks ?? {}).map(([name, n]) => [
      name.replace(new RegExp(`^${project}[_-]`), ''),
      n.IPAddress,
    ]),
  );
}
