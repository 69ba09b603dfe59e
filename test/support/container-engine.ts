import { randomBytes } from 'node:crypto';
import type { Readable } from 'node:stream';
import {
  type ContainerRuntimeClient,
  GenericContainer,
  getContainerRuntimeClient,
} from 'testcontainers';
import { stopOrphanDnsmasq } from './orphan-dns.js';

/**
 * What the container tests share: the images under test, labels on everything they create
 * (so that a run removes its own leftovers, and the next run those of a killed one), networks
 * and volumes, and the logs of containers. The global setup (test/containers/global-setup.ts)
 * points testcontainers at the engine and builds the images first.
 */

/**
 * The images under test, named as docker-compose.yml names them (the same GW_*_IMAGE
 * variables). The global setup sets them to tags of this run, so that a concurrent build on
 * the same machine cannot swap an image under a running suite.
 */
export const IMAGES = {
  get proxy() {
    return process.env.GW_PROXY_IMAGE || 'localhost/gw-proxy:latest';
  },
  get gateway() {
    return process.env.GW_GATEWAY_IMAGE || 'localhost/gw-gateway:latest';
  },
  get app() {
    return process.env.GW_APP_IMAGE || 'localhost/gw-app:latest';
  },
  get database() {
    return process.env.GW_POSTGRES_IMAGE || 'localhost/gw-base-postgres:15';
  },
  /** HAProxy in front of the pairs of docker-compose.replicas.yml. */
  get balancer() {
    return process.env.GW_BALANCER_IMAGE || 'localhost/gw-balancer:latest';
  },
  /** Debian with HAProxy: the balancer's base, and what holds a pair's network namespace. */
  get balancerBase() {
    return process.env.GW_BALANCER_BASE_IMAGE || 'localhost/gw-base-haproxy:2.6';
  },
  /** Debian's redis-server: docker-compose.replicas.yml's redis (profile global-limits). */
  get redis() {
    return process.env.GW_REDIS_IMAGE || 'localhost/gw-base-redis:7';
  },
  /** The test OpenID Connect provider (test/containers/oidc-provider/). */
  get oidcProvider() {
    return process.env.GW_TEST_OIDC_PROVIDER_IMAGE || 'localhost/gw-test-oidc-provider:latest';
  },
};

/** Labels on every container, network and volume the container tests create. */
export const LABEL_RUN = 'gw.test.run';
export const LABEL_PID = 'gw.test.pid';

export function testLabels(extra: Record<string, string> = {}): Record<string, string> {
  return {
    [LABEL_RUN]: process.env.GW_TEST_RUN || `manual-${process.pid}`,
    [LABEL_PID]: process.env.GW_TEST_PID || String(process.pid),
    ...extra,
  };
}

export function uniqueSuffix(): string {
  return randomBytes(4).toString('hex');
}

export async function engine(): Promise<ContainerRuntimeClient> {
  return await getContainerRuntimeClient();
}

/** A bridge network with the engine's DNS for container names and aliases. */
export async function createNetwork(name: string, labels: Record<string, string>): Promise<string> {
  const client = await engine();
  await client.container.dockerode.createNetwork({
    Name: name,
    CheckDuplicate: true,
    Driver: 'bridge',
    Labels: labels,
  });
  return name;
}

export async function createVolume(name: string, labels: Record<string, string>): Promise<string> {
  const client = await engine();
  await client.container.dockerode.createVolume({ Name: name, Labels: labels });
  return name;
}

/**
 * Removes every container, then every network and volume, carrying label `key` = `value`.
 * Containers go first: a network or volume in use cannot go, and with some network backends a
 * container removed after its network leaves a stale DNS record behind.
 */
export async function removeLabelled(key: string, value?: string): Promise<string[]> {
  const client = await engine();
  const docker = client.container.dockerode;
  const filter = JSON.stringify({ label: [value === undefined ? key : `${key}=${value}`] });
  const removed: string[] = [];
  for (const info of await docker.listContainers({ all: true, filters: filter })) {
    await docker
      .getContainer(info.Id)
      .remove({ force: true, v: true })
      .catch(() => {});
    removed.push(`container ${info.Names?.[0] ?? info.Id}`);
  }
  for (const network of await docker.listNetworks({ filters: filter })) {
    await docker
      .getNetwork(network.Id)
      .remove()
      .catch(() => {});
    removed.push(`network ${network.Name}`);
  }
  const { Volumes: volumes } = await docker.listVolumes({ filters: filter });
  for (const volume of volumes ?? []) {
    await docker
      .getVolume(volume.Name)
      .remove()
      .catch(() => {});
    removed.push(`volume ${volume.Name}`);
  }
  return removed;
}

/**
 * Stops the CNI dnsname plugin's dnsmasq processes whose network is gone (test/support/orphan-dns.ts
 * says how one breaks every later network), and says so: the container suite runs it before each
 * file and at its start.
 */
export async function stopOrphanDns(): Promise<void> {
  const stopped = await stopOrphanDnsmasq(async () => {
    const client = await engine();
    return (await client.container.dockerode.listNetworks()).map((network) => network.Name);
  });
  for (const { network, pid } of stopped)
    console.info(
      `container suite: stopped dnsmasq ${pid}, left running by removed network ${network}`,
    );
}

/**
 * Everything a container has written to stdout and stderr so far, running or stopped.
 * Containers without a TTY deliver the two streams multiplexed in frames of
 * [stream, 0, 0, 0, size (4 bytes, big-endian)] + payload.
 */
export async function containerLogs(id: string): Promise<string> {
  const client = await engine();
  const raw = (await client.container.dockerode
    .getContainer(id)
    .logs({ stdout: true, stderr: true, follow: false })) as unknown as Buffer;
  const buffer = Buffer.isBuffer(raw) ? raw : Buffer.from(String(raw));
  const chunks: Buffer[] = [];
  let offset = 0;
  while (offset + 8 <= buffer.length && [0, 1, 2].includes(buffer[offset]!)) {
    const size = buffer.readUInt32BE(offset + 4);
    chunks.push(buffer.subarray(offset + 8, offset + 8 + size));
    offset += 8 + size;
  }
  if (offset === 0) return buffer.toString('utf8');
  return Buffer.concat(chunks).toString('utf8');
}

/** The health check the engine runs for a container (its image's HEALTHCHECK unless overridden). */
export async function containerHealthcheck(id: string): Promise<string[]> {
  const client = await engine();
  const info = await client.container.dockerode.getContainer(id).inspect();
  return (info.Config?.Healthcheck?.Test as string[] | undefined) ?? [];
}

/**
 * GenericContainer plus what testcontainers 11 lacks: a published port bound to loopback only
 * (compose's `127.0.0.1:PORT:443`), and the container's log kept in memory from its first line
 * (testcontainers removes a container whose wait strategy failed, and its log with it).
 */
export class TestContainer extends GenericContainer {
  private readonly logText = { value: '' };

  withLoopbackPort(containerPort: number, hostPort: number): this {
    const key = `${containerPort}/tcp`;
    this.createOpts.ExposedPorts = { ...this.createOpts.ExposedPorts, [key]: {} };
    this.hostConfig.PortBindings = {
      ...this.hostConfig.PortBindings,
      [key]: [{ HostIp: '127.0.0.1', HostPort: String(hostPort) }],
    };
    return this;
  }

  /** Everything the container logged while it started (for failure messages). */
  get startupLog(): string {
    return this.logText.value;
  }

  override async start() {
    this.withLogConsumer((stream: Readable) => {
      stream.on('data', (chunk: Buffer | string) => {
        this.logText.value += chunk.toString();
      });
      stream.on('error', () => {});
    });
    try {
      return await super.start();
    } catch (err) {
      const tail = this.logText.value.split('\n').slice(-40).join('\n');
      throw new Error(`${(err as Error).message} (${this.createOpts.Image}); its log:\n${tail}`);
    }
  }
}
