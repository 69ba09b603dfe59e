/** The sidecar's settings, all from the environment. */
export interface SidecarConfig {
  databaseUrl: string;
  host: string;
  port: number;
}

export function readConfig(env: NodeJS.ProcessEnv): SidecarConfig {
  const databaseUrl = env.DATABASE_URL;
  if (!databaseUrl) throw new Error('DATABASE_URL is not set (e.g. postgres://user:pass@host/db)');
  const port = Number(env.PORT ?? '8081');
  if (!Number.isInteger(port) || port < 0 || port > 65_535) {
    throw new Error(`PORT must be a TCP port number, got ${JSON.stringify(env.PORT)}`);
  }
  return { databaseUrl, host: env.HOST ?? '127.0.0.1', port };
}
