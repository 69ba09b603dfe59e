import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { prepareDatabase } from '../../native/postgres.js';
import { Supervisor } from '../../native/supervisor.js';

export interface SharedDatabase {
  url: string;
  /** The postmaster, for CPU accounting (its backends are its children). */
  pid: number | undefined;
  stop(): Promise<void>;
}

/**
 * One PostgreSQL for every gateway of the run (revocation needs two pairs on one database),
 * started the way `npm start` starts its embedded one (same package, same flags, fsync on),
 * so the management figures are not flattered by a test-only `fsync=off`.
 */
export async function startSharedDatabase(dir: string): Promise<SharedDatabase> {
  await mkdir(dir, { recursive: true });
  const db = await prepareDatabase({
    env: {},
    homeDataDir: join(dir, 'data'),
    logFile: join(dir, 'postgres.log'),
    pidFile: join(dir, 'postgres.pid'),
  });
  const supervisor = new Supervisor({ say: () => {}, logOf: () => join(dir, 'postgres.log') });
  await supervisor.start(db.service!);
  return { url: db.url, pid: supervisor.current()[0]?.pid, stop: () => supervisor.stop() };
}
