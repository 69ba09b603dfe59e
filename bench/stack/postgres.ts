import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startDatabase } from '../../native/postgres.js';

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
  const dataDir = join(dir, 'data');
  const db = await startDatabase({}, dataDir, join(dir, 'postgres.log'));
  const pidLine = await readFile(join(dataDir, 'postmaster.pid'), 'utf8').catch(() => '');
  const pid = Number(pidLine.split('\n', 1)[0]);
  return { url: db.url, pid: Number.isInteger(pid) && pid > 0 ? pid : undefined, stop: db.stop };
}
