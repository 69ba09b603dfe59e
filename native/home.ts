import { mkdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';

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

/** Creates the directories; `run/` is owner-only because it holds the upstream sockets. */
export async function prepareHome(home: GatewayHome): Promise<void> {
  if (Buffer.byteLength(home.sidecarSocket) > MAX_SOCKET_PATH) {
    throw new Error(
      `GATEWAY_HOME is too deep for unix sockets (${home.sidecarSocket} is over ${MAX_SOCKET_PATH} bytes); choose a shorter path`,
    );
  }
  await mkdir(home.root, { recursive: true });
  for (const dir of [home.config, home.logs]) await mkdir(dir, { recursive: true });
  await mkdir(home.run, { recursive: true, mode: 0o700 });
}
