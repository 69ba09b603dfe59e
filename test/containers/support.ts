import {
  getContainerRuntimeClient,
  getReaper,
  ImageName,
  LABEL_TESTCONTAINERS_SESSION_ID,
} from 'testcontainers';

/**
 * The images under test: the project's images and the PostgreSQL image, named as
 * docker-compose.yml names them (the same GW_*_IMAGE variables, the same defaults);
 * docker/build-airgapped-images.sh builds them all and prints these variables.
 */
export const IMAGES = {
  proxy: process.env.GW_PROXY_IMAGE || 'localhost/gw-proxy:latest',
  gateway: process.env.GW_GATEWAY_IMAGE || 'localhost/gw-gateway:latest',
  app: process.env.GW_APP_IMAGE || 'localhost/gw-app:latest',
  database: process.env.GW_POSTGRES_IMAGE || 'localhost/gw-base-postgres:15',
} as const;

const HOW_TO =
  'prepare them with: eval "$(docker/setup-podman.sh)" && docker/build-airgapped-images.sh ' +
  '(as root, on Debian 12), or point DOCKER_HOST at a Docker engine and build the images ' +
  'named by GW_PROXY_IMAGE, GW_GATEWAY_IMAGE, GW_APP_IMAGE and GW_POSTGRES_IMAGE';

/**
 * Fails, saying what is missing, unless a container engine answers and every image is there:
 * the container suite never skips itself and never pulls (these machines reach no registry).
 */
export async function requireContainerEngine(): Promise<void> {
  if (process.env.TESTCONTAINERS_RYUK_DISABLED !== 'true') {
    throw new Error(
      'TESTCONTAINERS_RYUK_DISABLED is not "true": the reaper image cannot be pulled here, so ' +
        'testcontainers must not start it (the suite removes its own containers); ' +
        'docker/setup-podman.sh prints the variables to export',
    );
  }
  let client: Awaited<ReturnType<typeof getContainerRuntimeClient>>;
  try {
    client = await getContainerRuntimeClient();
  } catch (err) {
    throw new Error(
      `no container engine answers (DOCKER_HOST=${process.env.DOCKER_HOST ?? 'unset'}): ` +
        `${(err as Error).message}; ${HOW_TO}`,
    );
  }
  const missing: string[] = [];
  for (const image of Object.values(IMAGES)) {
    if (!(await client.image.exists(ImageName.fromString(image)))) missing.push(image);
  }
  if (missing.length > 0) throw new Error(`missing images: ${missing.join(', ')}; ${HOW_TO}`);
}

/** Resolves with the first match of `pattern` in a container's log stream (stdout and stderr). */
export function waitForLogLine(
  logs: NodeJS.ReadableStream,
  pattern: RegExp,
  timeoutMs: number,
): Promise<RegExpMatchArray> {
  return new Promise((resolve, reject) => {
    let seen = '';
    const timer = setTimeout(() => {
      logs.removeListener('data', onData);
      reject(new Error(`no log line matched ${pattern} within ${timeoutMs} ms; log:\n${seen}`));
    }, timeoutMs);
    const onData = (chunk: Buffer | string) => {
      seen += chunk.toString();
      const match = seen.match(pattern);
      if (match) {
        clearTimeout(timer);
        logs.removeListener('data', onData);
        resolve(match);
      }
    };
    logs.on('data', onData);
  });
}

/**
 * Removes every running container of this test session. testcontainers does not remove a
 * container whose start failed half-way, and without the reaper nothing else would.
 */
export async function removeSessionContainers(): Promise<void> {
  const client = await getContainerRuntimeClient();
  const { sessionId } = await getReaper(client);
  for (const info of await client.container.list()) {
    if (info.Labels[LABEL_TESTCONTAINERS_SESSION_ID] !== sessionId) continue;
    const container = client.container.getById(info.Id);
    await client.container.stop(container, { timeout: 2_000 });
    await client.container.remove(container, { removeVolumes: true });
  }
}
