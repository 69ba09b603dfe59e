import { existsSync } from 'node:fs';
import { connect } from 'node:tls';
import { NGINX_MODULE } from '../common/contract.js';
import { detectModules, findNginx, nginxHasLua } from '../generator/index.js';

/** nginx from PATH, or from /usr/sbin, which is often missing from a non-root PATH. */
export function locateNginx(env: NodeJS.ProcessEnv, fallbacks = ['/usr/sbin/nginx']): string {
  const found = findNginx(env.PATH) ?? fallbacks.find((path) => existsSync(path));
  if (found) return found;
  throw new Error(
    'nginx is not installed. On Debian or Ubuntu: sudo apt-get install nginx-light ' +
      'libnginx-mod-http-lua lua-resty-core lua-cjson (any nginx with ssl and the Lua module)',
  );
}

/**
 * nginx as the gateway needs it, or why not: the Lua module (the decision cache) and the
 * gateway's own module (default.conf's `location /` names its directive: without it nginx
 * would not start).
 */
export async function usableNginx(env: NodeJS.ProcessEnv): Promise<string> {
  const nginx = locateNginx(env);
  if (!(await nginxHasLua(nginx, detectModules()))) {
    throw new Error(
      `${nginx} has no Lua module, which the gateway's decision cache needs. On Debian or ` +
        'Ubuntu: sudo apt-get install libnginx-mod-http-lua lua-resty-core lua-cjson ' +
        '(or run OpenResty, which has it built in)',
    );
  }
  if (!detectModules().some((file) => file.endsWith(NGINX_MODULE.file))) {
    throw new Error(
      `the gateway's nginx module (${NGINX_MODULE.file}) is not built for ${nginx}: run ` +
        'bash scripts/build-nginx-module.sh (the set-up of npm start does; it needs nginx-dev ' +
        'and a C compiler)',
    );
  }
  return nginx;
}

/** Resolves when a TLS handshake on the port succeeds, i.e. nginx serves HTTPS. */
export async function waitForHttps(
  port: number,
  timeoutMs: number,
  alive: () => boolean,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const ok = await new Promise<boolean>((resolve) => {
      const socket = connect({ host: '127.0.0.1', port, rejectUnauthorized: false }, () => {
        socket.end();
        resolve(true);
      });
      socket.on('error', () => resolve(false));
      socket.setTimeout(1_000, () => socket.destroy());
    });
    if (ok) return;
    if (!alive()) throw new Error('nginx exited during start-up; see logs/nginx-error.log');
    if (Date.now() > deadline)
      throw new Error(`nginx did not serve HTTPS on port ${port} within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
