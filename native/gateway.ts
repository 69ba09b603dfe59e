import { readFile, rm, writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { join } from 'node:path';
import {
  checkConfigDir,
  detectModules,
  ensureConfigDir,
  LAYOUT,
  loadSettings,
  nginxArgs,
  nginxHasLua,
  writeMainConf,
} from '../generator/index.js';
import { Child } from './child.js';
import type { GatewayHome } from './home.js';
import { httpsPortOf, locateNginx, waitForHttps } from './nginx.js';
import { type Database, startDatabase } from './postgres.js';

export interface NativeGateway {
  url: string;
  stop(): Promise<void>;
  /** Resolves when a child ended without being asked to (the gateway keeps running). */
  children: Child[];
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
 * Starts the four roles as local processes: PostgreSQL (embedded unless DATABASE_URL is set),
 * the sidecar and the app on unix sockets in `run/`, and nginx over HTTPS with the
 * configuration directory `config/` (completed, never overwritten, then checked).
 */
export async function startNativeGateway({
  home,
  env,
  say,
}: GatewayOptions): Promise<NativeGateway> {
  const nginx = locateNginx(env);
  if (!(await nginxHasLua(nginx, detectModules()))) {
    throw new Error(
      `${nginx} has no Lua module, which the gateway's decision cache needs. On Debian or ` +
        'Ubuntu: sudo apt-get install libnginx-mod-http-lua lua-resty-core lua-cjson ' +
        '(or run OpenResty, which has it built in)',
    );
  }
  const settings = await loadSettings({
    env,
    defaults: { https_port: DEFAULT_HTTPS_PORT },
    overrides: {
      config_dir: home.config,
      upstreams: { app: `unix:${home.appSocket}`, sidecar: `unix:${home.sidecarSocket}` },
      auth_cache: { control_socket: home.controlSocket },
    },
  });
  const ensured = await ensureConfigDir(home.config, settings);
  if (ensured.written.length > 0) say(`Configuration written: ${ensured.written.join(', ')}`);
  const defaultConf = await readFile(join(home.config, LAYOUT.defaultConf), 'utf8');
  const port = httpsPortOf(defaultConf);
  if (port === null) throw new Error(`${LAYOUT.defaultConf} has no "listen ... ssl" line`);
  if (env.GATEWAY_HTTPS_PORT && Number(env.GATEWAY_HTTPS_PORT) !== port) {
    throw new Error(
      `GATEWAY_HTTPS_PORT is ${env.GATEWAY_HTTPS_PORT} but ${join(home.config, LAYOUT.defaultConf)} listens on ${port}: ` +
        'the file rules once written; edit it (or delete it to render it again)',
    );
  }
  const runtimeDir = join(home.run, 'nginx');
  await writeMainConf({
    runtimeDir,
    configDir: home.config,
    errorLog: join(home.logs, 'nginx-error.log'),
    accessLog: join(home.logs, 'nginx-access.log'),
    // As root, workers must be able to reach the owner-only sockets in run/ (native mode is
    // for development; the container image runs nginx as its own user).
    ...(process.getuid?.() === 0 ? { user: 'root' } : {}),
  });
  const check = await checkConfigDir(home.config, settings, { nginx });
  if (check.problems.length > 0) {
    throw new Error(
      `the configuration in ${home.config} is not valid:\n  ${check.problems.join('\n  ')}`,
    );
  }

  const started: Child[] = [];
  let database: Database | null = null;
  const stop = async () => {
    // Front to back: stop accepting callers first, the database last.
    for (const child of started) child.expectExit();
    for (const child of [...started].reverse()) await child.stop();
    await database?.stop();
    await Promise.all(
      ['sidecar.pid', 'app.pid', 'nginx.pid', 'url'].map((f) =>
        rm(join(home.run, f), { force: true }),
      ),
    );
  };
  const onUnexpectedExit = (name: string, code: number | null, signal: string | null) =>
    say(
      `${name} exited unexpectedly (${signal ?? `code ${code}`}); callers get 5xx until the gateway is restarted. See ${home.logs}/${name}.log`,
    );
  const spawnChild = (
    name: string,
    command: string,
    args: string[],
    childEnv: NodeJS.ProcessEnv,
    stopSignal: NodeJS.Signals = 'SIGTERM',
  ) => {
    const child = new Child({
      name,
      stopSignal,
      command,
      args,
      env: childEnv,
      logFile: join(home.logs, `${name}.log`),
      pidFile: join(home.run, `${name}.pid`),
      showLine: (line) => line.startsWith('NEWLY GENERATED'),
      onUnexpectedExit,
    });
    started.push(child);
    return child;
  };

  try {
    database = await startDatabase(env, home.postgres, join(home.logs, 'postgres.log'));
    say(`Database: ${database.description}`);
    const sidecar = spawnChild('sidecar', node, [dist('sidecar/main.js')], {
      ...env,
      DATABASE_URL: database.url,
      SOCKET: home.sidecarSocket,
      NGINX_CONTROL_SOCKET: home.controlSocket,
    });
    const app = spawnChild('app', node, [dist('engine/main.js')], {
      ...env,
      ENGINE_SOCKET: home.appSocket,
    });
    await Promise.all([
      waitForHttpOnSocket(home.sidecarSocket, '/healthz', sidecar, 60_000),
      waitForHttpOnSocket(home.appSocket, '/api', app, 30_000),
    ]);
    const proxy = spawnChild('nginx', nginx, nginxArgs(runtimeDir), env, 'SIGQUIT');
    await waitForHttps(port, 15_000, () => proxy.running);
    await Promise.all(started.map((c) => c.writePidFile()));
  } catch (err) {
    await stop();
    throw err;
  }
  const url = `https://${settings.fqdn}:${port}/`;
  await writeFile(join(home.run, 'url'), `${url}\n`);
  return { url, stop, children: started };
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
    if (!child.running)
      throw new Error(`a gateway process exited during start-up; see its log in logs/`);
    if (Date.now() > deadline)
      throw new Error(`${socketPath} did not answer ${path} within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
