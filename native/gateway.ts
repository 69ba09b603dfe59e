import { existsSync } from 'node:fs';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ListenAddress } from '../common/listen.js';
import { replaceFile } from '../generator/file-writes.js';
import {
  loadSettings,
  type NativePlaces,
  nativeOverrides,
  type PreparedProxy,
  prepareProxy,
  renewalLines,
  repairNativeConf,
  writeNativeHome,
} from '../generator/index.js';
import { LAYOUT } from '../generator/layout.js';
import { parseMetricsListen } from '../sidecar/config.js';
import { nativeAppUpstream } from './app-upstream.js';
import type { GatewayHome } from './home.js';
import { logLimitBytes, startLogRotation } from './log-rotation.js';
import { createLogFile } from './logs.js';
import { usableNginx } from './nginx.js';
import { prepareDatabase } from './postgres.js';
import { type Account, nginxWorkerAccount, openDirTo } from './privileges.js';
import { nativeRoles, type RoleContext } from './roles.js';
import { describeListen, READY_TIMEOUT_MS, sidecarReady } from './sidecar-ready.js';
import { Supervisor } from './supervisor.js';

export interface NativeGateway {
  url: string;
  /** The sidecar's `/metrics`, `/livez` and `/readyz` (METRICS_LISTEN); null when off. */
  metricsUrl: string | null;
  /** What the proxy was started with (`gateway-config prepare`'s answer). */
  proxy: PreparedProxy;
  stop(): Promise<void>;
  /** Resolves with the reason when a child keeps dying: the runner then stops and exits 1. */
  failed: Promise<string>;
  /** Kills every child at once (the runner is exiting some other way). */
  killNow(): void;
}

export interface GatewayOptions {
  home: GatewayHome;
  env: NodeJS.ProcessEnv;
  /** Progress lines for the operator. */
  say: (line: string) => void;
}

const DEFAULT_HTTPS_PORT = 8443;

/**
 * Starts the four roles as supervised local processes: PostgreSQL (embedded unless
 * DATABASE_URL is set), the sidecar and the app on unix sockets in `run/`, and nginx over
 * HTTPS on the configuration directory `config/`, prepared by the generator exactly as the
 * proxy container's entrypoint does (`prepareProxy`). As root, nginx's workers run as an
 * unprivileged user that can reach the sockets and nothing else of the home.
 */
export async function startNativeGateway({
  home,
  env,
  say,
}: GatewayOptions): Promise<NativeGateway> {
  // Read first: a bad METRICS_LISTEN stops the run before anything starts.
  const metricsListen = parseMetricsListen(env.METRICS_LISTEN);
  const logLimit = logLimitBytes(env.GATEWAY_LOG_MAX_MB);
  const nginx = await usableNginx(env);
  // GATEWAY_APP_UPSTREAM: the operator's application instead of the bundled engine.
  const ownApp = nativeAppUpstream(env.GATEWAY_APP_UPSTREAM);
  const native: NativePlaces = {
    configDir: home.config,
    sidecar: `unix:${home.sidecarSocket}`,
    app: ownApp ?? `unix:${home.appSocket}`,
    controlSocket: home.controlSocket,
  };
  const { proxy, worker } = await prepareNativeProxy(home, env, native, nginx, say);

  const roles = ['postgres', 'sidecar', ...(ownApp ? [] : ['app']), 'nginx'];
  const holds = roleHolds(home, roles);
  await holds.clear();
  const supervisor = new Supervisor({
    say,
    logOf: (name) => join(home.logs, `${name}.log`),
    heldDown: holds.heldDown,
  });
  let stopRotation = () => {};
  const stop = async () => {
    stopRotation();
    // Front to back: stop accepting callers first, the database last.
    await supervisor.stop();
    await holds.clear();
    await Promise.all(
      [...roles.map((name) => `${name}.pid`), 'url', 'proxy.json'].map((f) =>
        rm(join(home.run, f), { force: true }),
      ),
    );
  };

  try {
    await startRoles(supervisor, { home, env, say, nginx, proxy, worker }, ownApp, metricsListen);
  } catch (err) {
    await stop();
    throw err;
  }
  // Nothing else keeps them in bounds: a day of load wrote 2 GB of access log.
  stopRotation = startLogRotation(home.logs, logLimit, say);
  await writeFile(join(home.run, 'url'), `${proxy.url}\n`);
  // What the proxy was started with, for tools that need it (the test and bench harness):
  // read from here, never by parsing the rendered files again.
  await writeFile(join(home.run, 'proxy.json'), `${JSON.stringify(proxy, null, 2)}\n`);
  return {
    url: proxy.url,
    metricsUrl: metricsListen && describeListen(metricsListen),
    proxy,
    stop,
    failed: supervisor.failed,
    killNow: () => supervisor.killNow(),
  };
}

/**
 * The configuration directory made ready for this run (settings, a repaired default.conf, the
 * log files, `prepareProxy`), and nginx's worker account given the run directory.
 */
async function prepareNativeProxy(
  home: GatewayHome,
  env: NodeJS.ProcessEnv,
  native: NativePlaces,
  nginx: string,
  say: (line: string) => void,
): Promise<{ proxy: PreparedProxy; worker: Account | null }> {
  const settings = await loadSettings({
    env,
    defaults: { https_port: DEFAULT_HTTPS_PORT },
    overrides: nativeOverrides(native),
  });
  await repairDefaultConf(native, say);
  const worker = await nginxWorkerAccount();
  const errorLog = join(home.logs, 'nginx-error.log');
  const accessLog = join(home.logs, 'nginx-access.log');
  // Before nginx first opens them (its check included), or it makes them readable by all.
  for (const log of [errorLog, accessLog]) await createLogFile(log);
  const proxy = await prepareProxy({
    configDir: home.config,
    settings,
    runtimeDir: join(home.run, 'nginx'),
    errorLog,
    accessLog,
    ...(worker ? { user: worker.user } : {}),
    nginx,
    ...(env.GATEWAY_HTTPS_PORT ? { expectedHttpsPort: Number(env.GATEWAY_HTTPS_PORT) } : {}),
    native,
  });
  // For `gateway-config render` and `check` on this directory: where it runs.
  await writeNativeHome({ ...native, httpsPort: proxy.httpsPort });
  if (proxy.written.length > 0) say(`Configuration written: ${proxy.written.join(', ')}`);
  for (const line of renewalLines(proxy)) say(`Certificate ${line}`);
  if (worker) {
    await openDirTo(home.run, worker);
    say(`nginx workers run as ${worker.user}; the master keeps root (port, key)`);
  }
  return { proxy, worker };
}

/**
 * `run/<name>.down` holds a role down (e.g. to watch the gateway fail closed without its
 * sidecar); a hold does not outlive the run.
 */
function roleHolds(home: GatewayHome, roles: string[]) {
  const downFile = (name: string) => join(home.run, `${name}.down`);
  return {
    heldDown: (name: string) => existsSync(downFile(name)),
    clear: () => Promise.all(roles.map((name) => rm(downFile(name), { force: true }))),
  };
}

/** The roles in compose's order: the database, the sidecar and the app, then nginx. */
async function startRoles(
  supervisor: Supervisor,
  ctx: RoleContext,
  ownApp: string | null,
  metricsListen: ListenAddress | null,
): Promise<void> {
  const { home, env, say } = ctx;
  const database = await prepareDatabase({
    env,
    homeDataDir: home.postgres,
    logFile: join(home.logs, 'postgres.log'),
    pidFile: join(home.run, 'postgres.pid'),
  });
  if (database.service) await supervisor.start(database.service);
  say(`Database: ${database.description}`);
  const roles = nativeRoles(ctx, database.url);
  if (ownApp) {
    say(`Application: ${ownApp} (GATEWAY_APP_UPSTREAM; the bundled engine is not started)`);
    await supervisor.start(roles.sidecar);
  } else {
    const app = await roles.app();
    await Promise.all([supervisor.start(roles.sidecar), supervisor.start(app)]);
  }
  await supervisor.start(roles.nginx);
  // "Ready" means what a balancer's probe means: the sidecar's /readyz, which also waits for
  // nginx to hold the key table (a second for 10⁵ clients), not only nginx answering.
  if (metricsListen) await sidecarReady(metricsListen, READY_TIMEOUT_MS, say);
}

/**
 * A default.conf that names other sockets or another app than this run's (rendered for
 * containers, or GATEWAY_APP_UPSTREAM changed) would have nginx refuse every caller with 503:
 * those lines, and only those, are pointed at this run's, and the output says which.
 */
async function repairDefaultConf(native: NativePlaces, say: (line: string) => void): Promise<void> {
  const path = join(native.configDir, LAYOUT.defaultConf);
  const text = await readFile(path, 'utf8').catch(() => null);
  if (text === null) return;
  const repaired = repairNativeConf(text, native);
  if (repaired.changes.length === 0) return;
  await replaceFile(path, repaired.text);
  say(`Repaired ${path} for this native run (other lines kept):`);
  for (const change of repaired.changes) say(`  ${change}`);
}
