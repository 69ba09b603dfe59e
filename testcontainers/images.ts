import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { getContainerRuntimeClient, ImageName } from 'testcontainers';
import { GatewayStartError } from './errors.js';

/** The images a gateway is made of; names as docker-compose.yml takes them (GW_*_IMAGE). */
export interface GatewayImages {
  proxy: string;
  gateway: string;
  database: string;
}

/** The names docker/build-airgapped-images.sh gives the images it builds. */
export const BUILT_IMAGES: GatewayImages = {
  proxy: 'localhost/gw-proxy:latest',
  gateway: 'localhost/gw-gateway:latest',
  database: 'localhost/gw-base-postgres:15',
};

/** Option over GW_*_IMAGE variable over the name the build script gives. */
export function imageNames(
  chosen: Partial<GatewayImages>,
  env: NodeJS.ProcessEnv = process.env,
): GatewayImages {
  return {
    proxy: chosen.proxy ?? (env.GW_PROXY_IMAGE || BUILT_IMAGES.proxy),
    gateway: chosen.gateway ?? (env.GW_GATEWAY_IMAGE || BUILT_IMAGES.gateway),
    database: chosen.database ?? (env.GW_POSTGRES_IMAGE || BUILT_IMAGES.database),
  };
}

// dist/testcontainers/images.js → the package root.
const PACKAGE_ROOT = join(import.meta.dirname, '..', '..');

/**
 * Makes sure every image exists. Missing images under the build script's own names are built
 * the air-gapped way (docker/build-airgapped-images.sh, from this package's sources: root and
 * podman); a missing image under another name is an error naming it, never a build.
 */
export async function ensureImages(images: GatewayImages): Promise<void> {
  const client = await getContainerRuntimeClient();
  const missing: string[] = [];
  for (const name of new Set(Object.values(images))) {
    if (!(await client.image.exists(ImageName.fromString(name)))) missing.push(name);
  }
  if (missing.length === 0) return;
  const foreign = missing.filter((name) => !Object.values(BUILT_IMAGES).includes(name));
  if (foreign.length > 0) {
    throw new GatewayStartError(
      'IMAGE_MISSING',
      `GatewayContainer: image ${foreign.join(', ')} not found in the container engine; ` +
        'build or pull it, or leave the image names unset to have the project build its own',
    );
  }
  await buildAirgapped(missing);
}

/**
 * Runs the build script on a copy of this package: npm never packs package-lock.json, so the
 * package carries it as docker/package-lock.json and the copy puts it back where the
 * Dockerfiles read it.
 */
async function buildAirgapped(missing: string[]): Promise<void> {
  // In the project's own work tree the lockfile is where the Dockerfiles want it.
  const inPlace = existsSync(join(PACKAGE_ROOT, 'package-lock.json'));
  const context = inPlace ? PACKAGE_ROOT : await mkdtemp(join(tmpdir(), 'gw-image-context-'));
  try {
    if (!inPlace) await copyPackage(context);
    const log = await run('bash', [join(context, 'docker', 'build-airgapped-images.sh')]);
    if (log.code !== 0) {
      throw new GatewayStartError(
        'IMAGE_BUILD_FAILED',
        `GatewayContainer: ${missing.join(', ')} missing, and building them with ` +
          `docker/build-airgapped-images.sh failed (it needs root, podman and mmdebstrap; ` +
          `or set GW_PROXY_IMAGE, GW_GATEWAY_IMAGE, GW_POSTGRES_IMAGE to images you have):\n${tail(log.output)}`,
      );
    }
  } finally {
    if (!inPlace) await rm(context, { recursive: true, force: true });
  }
}

async function copyPackage(context: string): Promise<void> {
  await cp(PACKAGE_ROOT, context, {
    recursive: true,
    filter: (source) => !source.startsWith(join(PACKAGE_ROOT, 'node_modules')),
  });
  await cp(join(context, 'docker', 'package-lock.json'), join(context, 'package-lock.json'));
}

function run(command: string, args: string[]): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    const keep = (chunk: Buffer) => {
      output += chunk.toString();
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    child.on('error', (err) => resolve({ code: -1, output: err.message }));
    child.on('close', (code) => resolve({ code: code ?? -1, output }));
  });
}

/** The last lines of a log, where the reason usually is. */
export function tail(text: string, lines = 30): string {
  return text.trimEnd().split('\n').slice(-lines).join('\n');
}
