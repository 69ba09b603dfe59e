import { chmod, mkdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { freePort } from '../../native/ports.js';
import { type RunningProcess, startProcess } from '../../test/support/process.js';
import { withTimeout } from '../cleanup.js';

const MAIN = join(import.meta.dirname, '..', '..', 'native', 'main.js');

export interface GatewayPids {
  runner: number | undefined;
  nginx: number | undefined;
  sidecar: number | undefined;
  app: number | undefined;
}

/** A native gateway (`npm start`'s `dist/native/main.js`) in its own home, on a free port. */
export interface BenchGateway {
  name: string;
  home: string;
  port: number;
  /** `https://127.0.0.1:<port>`: callers connect to loopback and present SNI `localhost`. */
  url: string;
  /** The bootstrap admin key (only the gateway started with `createKey`). */
  adminKey: string;
  /** The certificate nginx serves (self-signed, CN `localhost`): what clients trust. */
  ca: string;
  configDir: string;
  appSocket: string;
  pids: GatewayPids;
  stop(): Promise<void>;
}

export interface GatewayStart {
  name: string;
  /** A fresh directory for GATEWAY_HOME (short: it holds unix sockets). */
  home: string;
  databaseUrl: string;
  createKey: boolean;
  /** Extra environment (GATEWAY_SETTINGS, OIDC_CA_FILE...). */
  env: Record<string, string>;
  engineAdminPassword: string;
  /** The HTTPS port, when its configuration was rendered before the start; default: a free one. */
  port?: number;
}

/** Spawns the runner exactly as an operator would, and waits for its "Gateway ready" line. */
export async function startGateway(start: GatewayStart): Promise<BenchGateway> {
  await mkdir(start.home, { recursive: true });
  // As root, embedded PostgreSQL would run as "postgres"; the shared database lives elsewhere,
  // but keep the home enterable like test/support/native-stack.ts does.
  await chmod(start.home, 0o755);
  const port = start.port ?? (await freePort());
  const runner: RunningProcess = startProcess(process.execPath, [MAIN], {
    PATH: process.env.PATH,
    GATEWAY_HOME: start.home,
    GATEWAY_HTTPS_PORT: String(port),
    GATEWAY_FQDN: 'localhost',
    DATABASE_URL: start.databaseUrl,
    ENGINE_ADMIN_PASSWORD: start.engineAdminPassword,
    API_KEY_CREATE: start.createKey ? 'true' : 'false',
    ...start.env,
  });
  const configDir = join(start.home, 'config');
  const stop = async () => {
    // Read before stopping: the configuration says where this nginx kept its auth cache.
    const cache = await authCacheDir(configDir);
    try {
      await withTimeout(runner.stop('SIGINT'), 20_000, `${start.name} runner`);
    } catch {
      runner.child.kill('SIGKILL');
    }
    // The runner removes it when it stops cleanly; after a SIGKILL it is ours to remove.
    if (cache) await rm(cache, { recursive: true, force: true });
  };
  try {
    await runner.waitFor(/Gateway ready: /, 120_000);
  } catch (err) {
    await stop();
    throw err;
  }
  const adminKey = /NEWLY GENERATED API KEY: (\S+)/.exec(runner.stdout())?.[1] ?? '';
  if (start.createKey && !adminKey) throw new Error(`${start.name}: no bootstrap key printed`);
  const run = join(start.home, 'run');
  const pidOf = async (file: string) => {
    const n = Number((await readFile(join(run, file), 'utf8').catch(() => '')).trim());
    return Number.isInteger(n) && n > 0 ? n : undefined;
  };
  return {
    name: start.name,
    home: start.home,
    port,
    url: `https://127.0.0.1:${port}`,
    adminKey,
    ca: await readFile(join(configDir, 'nginx/ssl/nginx.crt'), 'utf8'),
    configDir,
    appSocket: join(run, 'app.sock'),
    pids: {
      runner: runner.child.pid,
      nginx: await pidOf('nginx.pid'),
      sidecar: await pidOf('sidecar.pid'),
      app: await pidOf('app.pid'),
    },
    stop,
  };
}

/**
 * The nginx auth cache directory of a native gateway (`proxy_cache_path` in its default.conf),
 * when it is a per-home directory under /dev/shm (the native runner's choice), else null: a
 * shared path such as /var/cache/gateway-auth is never removed.
 */
async function authCacheDir(configDir: string): Promise<string | null> {
  const conf = await readFile(join(configDir, 'nginx/conf.d/default.conf'), 'utf8').catch(() => '');
  const path = /^\s*proxy_cache_path\s+"?([^"\s;]+)/m.exec(conf)?.[1];
  return path && /^\/dev\/shm\/gateway-auth-[0-9a-f]+$/.test(path) ? path : null;
}
