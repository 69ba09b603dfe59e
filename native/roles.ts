import { rmSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import type { PreparedProxy } from '../generator/index.js';
import { LAYOUT } from '../generator/layout.js';
import { REFUSED_LINE } from '../sidecar/bootstrap.js';
import { Child } from './child.js';
import { enginePassword } from './engine-password.js';
import type { GatewayHome } from './home.js';
import { waitForHttps } from './nginx.js';
import { type Account, openSocketTo } from './privileges.js';
import type { ServiceSpec } from './supervisor.js';

const node = process.execPath;
const dist = (path: string) => join(import.meta.dirname, '..', path);

/** What the roles of one native run share: where they live and what they start with. */
export interface RoleContext {
  home: GatewayHome;
  env: NodeJS.ProcessEnv;
  say: (line: string) => void;
  nginx: string;
  proxy: PreparedProxy;
  /** nginx's unprivileged worker account (as root), which must reach the sockets. */
  worker: Account | null;
}

/**
 * The sidecar, the bundled engine (`app`) and nginx as the supervisor starts them; PostgreSQL's
 * service comes from prepareDatabase. Each child logs to `logs/<name>.log` with its pid in
 * `run/<name>.pid`.
 */
export function nativeRoles(ctx: RoleContext, databaseUrl: string) {
  const child = roleChild(ctx.home);
  /** Ready when the socket answers; then the workers may connect to it. */
  const socketReady = async (socket: string, path: string, c: Child, timeoutMs: number) => {
    await waitForHttpOnSocket(socket, path, c, timeoutMs);
    if (ctx.worker) await openSocketTo(socket, ctx.worker);
  };
  const { home, env, proxy } = ctx;
  // A restart is not a new start: the bootstrap key is made once per run (spec 5.2), and
  // the engine's administrator keeps the password printed at the first start.
  let sidecarStarts = 0;
  const sidecar: ServiceSpec = {
    name: 'sidecar',
    spawn: () =>
      child('sidecar', node, [dist('sidecar/main.js')], {
        ...env,
        ...(sidecarStarts++ > 0 ? { API_KEY_CREATE: 'false' } : {}),
        DATABASE_URL: databaseUrl,
        SOCKET: home.sidecarSocket,
        // The proof nginx shows, in the configuration directory they share (prepare made it).
        GATEWAY_PROOF_FILE: join(home.config, LAYOUT.sidecarProof),
        // As default.conf says, hand edits included: where to push revocations.
        ...(proxy.controlSocket ? { NGINX_CONTROL_SOCKET: proxy.controlSocket } : {}),
      }),
    ready: (c) => socketReady(home.sidecarSocket, '/healthz', c, 60_000),
  };
  const app = async (): Promise<ServiceSpec> => {
    const engine = await engineService(home, env, ctx.say, (childEnv) =>
      child('app', node, [dist('engine/main.js')], childEnv),
    );
    return { ...engine, ready: (c) => socketReady(home.appSocket, '/api', c, 30_000) };
  };
  const nginx: ServiceSpec = {
    name: 'nginx',
    spawn: () => {
      // A killed nginx leaves its control socket behind, and nginx will not bind over it.
      // The supervisor spawns only once the last nginx (and its process group) is gone.
      if (proxy.controlSocket) rmSync(proxy.controlSocket, { force: true });
      return child('nginx', ctx.nginx, proxy.nginxArgs, env, 'SIGQUIT');
    },
    ready: (c) => waitForHttps(proxy.httpsPort, 15_000, () => c.running),
  };
  return { sidecar, app, nginx };
}

/** One child of the run: its log and pid file in the home, the operator's lines shown. */
function roleChild(home: GatewayHome) {
  return (
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
