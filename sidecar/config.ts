import type { ListenAddress } from '../common/listen.js';

/** The sidecar's settings, all from the environment. */
export interface SidecarConfig {
  databaseUrl: string;
  listen: ListenAddress;
  /** nginx's control socket, to invalidate its decisions; absent: no nginx to tell. */
  controlSocket?: string | null;
}

export function readConfig(env: NodeJS.ProcessEnv): SidecarConfig {
  const databaseUrl = env.DATABASE_URL;
  if (!databaseUrl) throw new Error('DATABASE_URL is not set (e.g. postgres://user:pass@host/db)');
  // SOCKET (a unix socket path) wins over HOST and PORT; the native run uses it.
  const controlSocket = env.NGINX_CONTROL_SOCKET || null;
  if (env.SOCKET) return { databaseUrl, listen: { socket: env.SOCKET }, controlSocket };
  const port = Number(env.PORT ?? '8081');
  if (!Number.isInteger(port) || port < 0 || port > 65_535) {
    throw new Error(`PORT must be a TCP port number, got ${JSON.stringify(env.PORT)}`);
  }
  return { databaseUrl, listen: { host: env.HOST ?? '127.0.0.1', port }, controlSocket };
}
