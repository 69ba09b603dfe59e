import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { lstat, mkdir, realpath, symlink } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { prepareLogDir } from './logs.js';
import { traversableByOthers } from './privileges.js';

/** Everything the native gateway keeps, under one directory (`GATEWAY_HOME`). */
export interface GatewayHome {
  root: string;
  /** The `/etc/config` layout: nginx/conf.d/default.conf, nginx/ssl/... */
  config: string;
  /** Embedded PostgreSQL data (unless DATABASE_URL is set). */
  postgres: string;
  logs: string;
  /** nginx runtime files, pid files and the unix sockets of the sidecar and the app. */
  run: string;
  sidecarSocket: string;
  appSocket: string;
  /** nginx's control endpoint, through which the sidecar invalidates cached decisions. */
  controlSocket: string;
}

// A unix socket path must fit sockaddr_un.sun_path (108 bytes on Linux, with the NUL).
const MAX_SOCKET_PATH = 107;

export function gatewayHome(dir: string): GatewayHome {
  const root = resolve(dir);
  const run = join(root, 'run');
  return {
    root,
    config: join(root, 'config'),
    postgres: join(root, 'postgres'),
    logs: join(root, 'logs'),
    run,
    sidecarSocket: join(run, 'sidecar.sock'),
    appSocket: join(run, 'app.sock'),
    controlSocket: join(run, 'nginx-control.sock'),
  };
}

/**
 * Creates the directories; `run/` is owner-only because it holds the upstream sockets, and
 * `logs/` because the sidecar's log holds the bootstrap key. As
 * root, nginx's unprivileged workers must reach those sockets: when the home lies where they
 * cannot pass (a checkout in /root, say), `run/` is a link to /run/gateway-native/<hash of the
 * home>, and the returned home names the real path (the one rendered into default.conf).
 */
export async function prepareHome(home: GatewayHome): Promise<GatewayHome> {
  await mkdir(home.root, { recursive: true });
  await mkdir(home.config, { recursive: true });
  await prepareLogDir(home.logs);
  let run = home.run;
  const link = await lstat(run).catch(() => null);
  if (link?.isSymbolicLink()) {
    run = await realpath(run);
  } else if (!link && process.getuid?.() === 0 && !(await traversableByOthers(home.root))) {
    const hash = createHash('sha256').update(home.root).digest('hex').slice(0, 16);
    run = join(existsSync('/run') ? '/run' : '/var/tmp', 'gateway-native', hash);
    await mkdir(dirname(run), { recursive: true, mode: 0o711 });
    await symlink(run, home.run);
  }
  await mkdir(run, { recursive: true, mode: 0o700 });
  const prepared = {
    ...home,
    run,
    sidecarSocket: join(run, 'sidecar.sock'),
    appSocket: join(run, 'app.sock'),
    controlSocket: join(run, 'nginx-control.sock'),
  };
  if (Buffer.byteLength(prepared.sidecarSocket) > MAX_SOCKET_PATH) {
    throw new Error(
      `GATEWAY_HOME is too deep for unix sockets (${prepared.sidecarSocket} is over ${MAX_SOCKET_PATH} bytes); choose a shorter path`,
    );
  }
  return prepared;
}
