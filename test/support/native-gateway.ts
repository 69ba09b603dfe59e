import { chmod, mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { PreparedProxy } from '../../generator/index.js';
import { freePort } from '../../native/ports.js';
import { type RunningProcess, startProcess } from './process.js';

/**
 * The one harness that starts a native gateway for the tests and the bench: the runner
 * (`dist/native/main.js`, what `npm start` runs) exactly as an operator starts it, in its own
 * home, on a free port; it waits for "Gateway ready" and picks the bootstrap key out of the
 * output. What the proxy was started with comes from the runner's `run/proxy.json` (the
 * generator's `prepare` answer), never from parsing the rendered files.
 */
/** The runner's entry point, whether this file runs from the sources (vitest) or from dist/ (the bench). */
function runnerMain(): string {
  const fromDist = import.meta.filename.endsWith('.js');
  return join(import.meta.dirname, '..', '..', ...(fromDist ? [] : ['dist']), 'native', 'main.js');
}

/** The roles of the native run, by the names of their pid and log files. */
export type NativeRole = 'postgres' | 'sidecar' | 'app' | 'nginx';

export interface NativeGatewayOptions {
  /** GATEWAY_HOME; keep it short (it holds unix sockets). */
  home: string;
  /** Default: a free port. */
  port?: number;
  fqdn?: string;
  /** The runner's extra environment (API_KEY_CREATE, DATABASE_URL, GATEWAY_SETTINGS...). */
  env?: Record<string, string | undefined>;
  readyTimeoutMs?: number;
}

export interface NativeGatewayProcess {
  runner: RunningProcess;
  home: string;
  port: number;
  fqdn: string;
  /** `https://127.0.0.1:<port>`: callers connect to loopback and present SNI `fqdn`. */
  loopbackUrl: string;
  /** The sidecar's metrics listener, `http://127.0.0.1:<free port>` (METRICS_LISTEN). */
  metricsUrl: string;
  /** The bootstrap key printed by this start ('' when API_KEY_CREATE was not true). */
  adminKey: string;
  configDir: string;
  /** The certificate nginx serves (self-signed: its own CA). */
  ca: string;
  /** `gateway-config prepare`'s answer for this start (ports, cache paths, main conf). */
  proxy: PreparedProxy;
  /** Everything the runner printed so far. */
  output(): string;
  /** The pid of a role's current process. */
  pid(role: NativeRole): Promise<number | undefined>;
  /** Stops the runner (SIGINT, like Ctrl-C); resolves to its exit code. */
  stop(): Promise<number | null>;
}

/** Starts the runner and waits until it says "Gateway ready". */
export async function launchNativeGateway(
  options: NativeGatewayOptions,
): Promise<NativeGatewayProcess> {
  await mkdir(options.home, { recursive: true });
  // As root, embedded PostgreSQL runs as "postgres" and nginx's workers as www-data: both
  // must be able to enter the home (the data and sockets stay inside and go with it).
  await chmod(options.home, 0o755);
  const port = options.port ?? (await freePort());
  const fqdn = options.fqdn ?? 'localhost';
  // Its own metrics port, so gateways started side by side never compete for 9464.
  const metricsPort = await freePort();
  const runner = startProcess(process.execPath, [runnerMain()], {
    PATH: process.env.PATH,
    // The sanitizer suite (test/sanitizers/): its nginx is first on PATH, and its module here.
    ...(process.env.GATEWAY_NGINX_MODULE_DIR
      ? { GATEWAY_NGINX_MODULE_DIR: process.env.GATEWAY_NGINX_MODULE_DIR }
      : {}),
    GATEWAY_HOME: options.home,
    GATEWAY_HTTPS_PORT: String(port),
    GATEWAY_FQDN: fqdn,
    METRICS_LISTEN: `127.0.0.1:${metricsPort}`,
    ...options.env,
  });
  const run = join(options.home, 'run');
  const configDir = join(options.home, 'config');
  const stop = () => runner.stop('SIGINT');
  try {
    await runner.waitFor(/Gateway ready: /, options.readyTimeoutMs ?? 120_000);
  } catch (err) {
    await stop();
    throw err;
  }
  const output = () => runner.stdout() + runner.stderr();
  return {
    runner,
    home: options.home,
    port,
    fqdn,
    loopbackUrl: `https://127.0.0.1:${port}`,
    metricsUrl: `http://127.0.0.1:${metricsPort}`,
    adminKey: bootstrapKey(runner.stdout()),
    configDir,
    ca: await readFile(join(configDir, 'nginx/ssl/nginx.crt'), 'utf8'),
    proxy: await readProxy(run),
    output,
    async pid(role) {
      const n = Number((await readFile(join(run, `${role}.pid`), 'utf8').catch(() => '')).trim());
      return Number.isInteger(n) && n > 0 ? n : undefined;
    },
    stop,
  };
}

/** The last bootstrap key in a runner's output (spec 5.2's line), or ''. */
export function bootstrapKey(output: string): string {
  const keys = [...output.matchAll(/NEWLY GENERATED API KEY: (\S+)/g)];
  return keys.at(-1)?.[1] ?? '';
}

async function readProxy(run: string): Promise<PreparedProxy> {
  return JSON.parse(await readFile(join(run, 'proxy.json'), 'utf8')) as PreparedProxy;
}
