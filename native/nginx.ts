import { existsSync } from 'node:fs';
import { connect } from 'node:tls';
import { findNginx } from '../generator/index.js';

/** nginx from PATH, or from /usr/sbin, which is often missing from a non-root PATH. */
export function locateNginx(env: NodeJS.ProcessEnv, fallbacks = ['/usr/sbin/nginx']): string {
  const found = findNginx(env.PATH) ?? fallbacks.find((path) => existsSync(path));
  if (found) return found;
  throw new Error(
    'nginx is not installed. On Debian or Ubuntu: sudo apt-get install nginx-light ' +
      'libnginx-mod-http-lua lua-resty-core lua-cjson (any nginx with ssl and the Lua module)',
  );
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
