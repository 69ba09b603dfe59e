import { existsSync, rmSync } from 'node:fs';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { join } from 'node:path';
import { NGINX_MODULE } from '../common/contract.js';
import type { ListenAddress } from '../common/listen.js';
import { replaceFile } from '../generator/file-writes.js';
import {
  detectModules,
  loadSettings,
  type NativePlaces,
  nativeOverrides,
  nginxHasLua,
  type PreparedProxy,
  prepareProxy,
  renewalLines,
  repairNativeConf,
  writeNativeHome,
} from '../generator/index.js';
import { LAYOUT } from '../generator/layout.js';
import { REFUSED_LINE } from '../sidecar/bootstrap.js';
import { parseMetricsListen } from '../sidecar/config.js';
import { nativeAppUpstream } from './app-upstream.js';
import { Child } from './child.js';
import { enginePassword } from './engine-password.js';
import type { GatewayHome } from './home.js';
import { logLimitBytes, startLogRotation } from './log-rotation.js';
import { createLogFile } from './logs.js';
import { locateNginx, waitForHttps } from './nginx.js';
import { prepareDatabase } from './postgres.js';
import { nginxWorkerAccount, openDirTo, openSocketTo } from './privileges.js';
import { type ServiceSpec, Supervisor } from './supervisor.js';

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
const node = process.execPath;
const dist = (path: string) => join(import.meta.dirname, '..', path);

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
  const nginx = locateNginx(env);
  if (!(await nginxHasLua(nginx, detectModules()))) {
    throw new Error(
      `${nginx} has no Lua module, which the gateway's decision cache needs. On Debian or ` +
        'Ubuntu: sudo apt-get install libnginx-mod-http-lua lua-resty-core lua-cjson ' +
        '(or run OpenResty, which has it built in)',
    );
  }
  // default.conf's `location /` names the module's directive: without it nginx would not start.
  if (!detectModules().some((file) => file.endsWith(NGINX_MODULE.file))) {
    throw new Error(
      `the gateway's nginx module (${NGINX_MODULE.file}) is not built for ${nginx}: run ` +
        'bash scripts/build-nginx-module.sh (the set-up of npm start does; it needs nginx-dev ' +
        'and a C compiler)',
    );
  }
  // GATEWAY_APP_UPSTREAM: the operator's application instead of the bundled engine.
  const ownApp = nativeAppUpstream(env.GATEWAY_APP_UPSTREAM);
  const native: NativePlaces = {
    configDir: home.config,
    sidecar: `unix:${home.sidecarSocket}`,
    app: ownApp ?? `unix:${home.appSocket}`,
    controlSocket: home.controlSocket,
  };
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

  // `run/<name>.down` holds a role down (e.g. to watch the gateway fail closed without its
  // sidecar); a hold does not outlive the run.
  const downFile = (name: string) => join(home.run, `${name}.down`);
  const roles = ['postgres', 'sidecar', ...(ownApp ? [] : ['app']), 'nginx'];
  const clearHolds = () => Promise.all(roles.map((name) => rm(downFile(name), { force: true })));
  await clearHolds();
  const supervisor = new Supervisor({
    say,
    logOf: (name) => join(home.logs, `${name}.log`),
    heldDown: (name) => existsSync(downFile(name)),
  });
  const child = (
    name: string,
    command: string,
    args: string[],
    childEnv: NodeJS.ProcessEnv,
    stopSignal: NodeJS.Signals = 'SIGTERM',
  ) =>
    new Child({
      name,
      stopSignal,
      command,
      args,
      env: childEnv,
      logFile: join(home.logs, `${name}.log`),
      pidFile: join(home.run, `${name}.pid`),
      // The bootstrap key, the engine's password, and why no key was made (the lock).
      showLine: (line) => line.startsWith('NEWLY GENERATED') || line === REFUSED_LINE,
    });
  /** Ready when the socket answers; then the workers may connect to it. */
  const socketReady = async (socket: string, path: string, c: Child, timeoutMs: number) => {
    await waitForHttpOnSocket(socket, path, c, timeoutMs);
    if (worker) await openSocketTo(socket, worker);
  };

  let stopRotation = () => {};
  const stop = async () => {
    stopRotation();
    // Front to back: stop accepting callers first, the database last.
    await supervisor.stop();
    await clearHolds();
    await Promise.all(
      [...roles.map((name) => `${name}.pid`), 'url', 'proxy.json'].map((f) =>
        rm(join(home.run, f), { force: true }),
      ),
    );
  };

  try {
    const database = await prepareDatabase({
      env,
      homeDataDir: home.postgres,
      logFile: join(home.logs, 'postgres.log'),
      pidFile: join(home.run, 'postgres.pid'),
    });
    if (database.service) await supervisor.start(database.service);
    say(`Database: ${database.description}`);
    // A restart is not a new start: the bootstrap key is made once per run (spec 5.2), and
    // the engine's administrator keeps the password printed at the first start.
    let sidecarStarts = 0;
    const sidecar: ServiceSpec = {
      name: 'sidecar',
      spawn: () =>
        child('sidecar', node, [dist('sidecar/main.js')], {
          ...env,
          ...(sidecarStarts++ > 0 ? { API_KEY_CREATE: 'false' } : {}),
          DATABASE_URL: database.url,
          SOCKET: home.sidecarSocket,
          // The proof nginx shows, in the configuration directory they share (prepare made it).
          GATEWAY_PROOF_FILE: join(home.config, LAYOUT.sidecarProof),
          // As default.conf says, hand edits included: where to push revocations.
          ...(proxy.controlSocket ? { NGINX_CONTROL_SOCKET: proxy.controlSocket } : {}),
        }),
      ready: (c) => socketReady(home.sidecarSocket, '/healthz', c, 60_000),
    };
    if (ownApp) {
      say(`Application: ${ownApp} (GATEWAY_APP_UPSTREAM; the bundled engine is not started)`);
      await supervisor.start(sidecar);
    } else {
      const app = await engineService(home, env, say, (childEnv) =>
        child('app', node, [dist('engine/main.js')], childEnv),
      );
      await Promise.all([
        supervisor.start(sidecar),
        supervisor.start({ ...app, ready: (c) => socketReady(home.appSocket, '/api', c, 30_000) }),
      ]);
    }
    await supervisor.start({
      name: 'nginx',
      spawn: () => {
        // A killed nginx leaves its control socket behind, and nginx will not bind over it.
        // The supervisor spawns only once the last nginx (and its process group) is gone.
        if (proxy.controlSocket) rmSync(proxy.controlSocket, { force: true });
        return child('nginx', nginx, proxy.nginxArgs, env, 'SIGQUIT');
      },
      ready: (c) => waitForHttps(proxy.httpsPort, 15_000, () => c.running),
    });
    // "Ready" means what a balancer's probe means: the sidecar's /readyz, which also waits for
    // nginx to hold the key table (a second for 10⁵ clients), not only nginx answering.
    if (metricsListen) await sidecarReady(metricsListen, READY_TIMEOUT_MS, say);
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
 * The bundled engine, with its administrator's password: ENGINE_ADMIN_PASSWORD, or the one
 * generated at the home's first start and kept there (printed that once, like the bootstrap key).
 */
async function engineService(
  home: GatewayHome,
  env: NodeJS.ProcessEnv,
  say: (line: string) => void,
  spawn: (env: NodeJS.ProcessEnv) => Child,
): Promise<Pick<ServiceSpec, 'name' | 'spawn'>> {
  const engineEnv: NodeJS.ProcessEnv = { ...env, ENGINE_SOCKET: home.appSocket };
  if (!engineEnv.ENGINE_ADMIN_PASSWORD) {
    const kept = await enginePassword(home.root);
    engineEnv.ENGINE_ADMIN_PASSWORD = kept.password;
    const user = env.ENGINE_ADMIN_USER || 'admin';
    say(
      kept.fresh
        ? `NEWLY GENERATED ENGINE ADMIN PASSWORD for ${user}: ${kept.password} (kept in ${kept.file})`
        : `Engine admin ${user}: the password printed at the first start (kept in ${kept.file})`,
    );
  }
  return { name: 'app', spawn: () => spawn(engineEnv) };
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

/** How an operator reaches a listen address: a URL, or `unix:/path`. */
function describeListen(address: ListenAddress): string {
  if ('socket' in address) return `unix:${address.socket}`;
  const host = address.host.includes(':') ? `[${address.host}]` : address.host;
  return `http://${host}:${address.port}`;
}

const READY_TIMEOUT_MS = 60_000;

/**
 * Polls the sidecar's /readyz until it answers 200; past `timeoutMs`, says why it is not ready
 * and goes on (the pair still decides correctly, asking the sidecar where nginx cannot).
 */
async function sidecarReady(
  listen: ListenAddress,
  timeoutMs: number,
  say: (line: string) => void,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const answer = await new Promise<{ status: number; text: string }>((resolve) => {
      const target =
        'socket' in listen
          ? { socketPath: listen.socket }
          : { host: listen.host, port: listen.port };
      const req = request({ ...target, path: '/readyz', timeout: 2_000 }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          text += chunk;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      });
      req.on('error', () => resolve({ status: 0, text: '' }));
      req.on('timeout', () => req.destroy());
      req.end();
    });
    if (answer.status === 200) return;
    if (Date.now() > deadline) {
      say(`Not ready yet (the sidecar's /readyz says ${answer.status}: ${answer.text.trim()})`);
      return;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Polls an HTTP path over a unix socket until it answers 2xx. */
async function waitForHttpOnSocket(
  socketPath: string,
  path: string,
  child: Child,
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const status = await new Promise<number>((resolve) => {
      const req = request({ socketPath, path, timeout: 1_000 }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', () => resolve(0));
      req.on('timeout', () => req.destroy());
      req.end();
    });
    if (status >= 200 && status < 300) return;
    if (!child.running) throw new Error(`${child.name} exited during start-up`);
    if (Date.now() > deadline)
      throw new Error(`${socketPath} did not answer ${path} within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
