import { type ChildProcess, spawn } from 'node:child_process';
import { chmod, mkdtemp, readFile, rm } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findNginx, nginxArgs, writeMainConf } from '../../../../generator/index.js';

/** The real nginx the tests run: `$NGINX_BIN`, nginx on the PATH, or Debian's path. */
export const NGINX = process.env.NGINX_BIN ?? findNginx() ?? '/usr/sbin/nginx';

export interface RunningNginx {
  runtimeDir: string;
  errorLog(): Promise<string>;
  /** The access log ("" when off). */
  accessLog(): Promise<string>;
  stop(): Promise<void>;
}

async function acceptsConnections(port: number): Promise<boolean> {
  return await new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

function exited(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.once('exit', () => resolve());
  });
}

/**
 * Starts the real nginx in the foreground on `configDir` with the gateway's main nginx.conf
 * in a fresh runtime directory, and resolves once `port` accepts connections.
 */
export async function startNginx(
  configDir: string,
  port: number,
  options: { accessLog?: boolean } = {},
): Promise<RunningNginx> {
  const runtimeDir = await mkdtemp(join(tmpdir(), 'gw-nginx-run-'));
  // Workers run as an unprivileged user when the tests run as root; they need to enter it.
  await chmod(runtimeDir, 0o755);
  const errorLogPath = join(runtimeDir, 'error.log');
  const accessLogPath = join(runtimeDir, 'access.log');
  await writeMainConf({
    runtimeDir,
    configDir,
    errorLog: errorLogPath,
    errorLogLevel: 'info',
    accessLog: options.accessLog ? accessLogPath : 'off',
    workerProcesses: 1,
  });
  const child = spawn(NGINX, nginxArgs(runtimeDir), { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (chunk) => {
    stderr += String(chunk);
  });
  const errorLog = () => readFile(errorLogPath, 'utf8').catch(() => '');
  for (let attempt = 0; !(await acceptsConnections(port)); attempt++) {
    if (child.exitCode !== null || attempt > 200) {
      child.kill('SIGKILL');
      throw new Error(`nginx did not start: ${stderr}\n${await errorLog()}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return {
    runtimeDir,
    errorLog,
    accessLog: () => readFile(accessLogPath, 'utf8').catch(() => ''),
    async stop() {
      child.kill('SIGTERM');
      await exited(child);
      await rm(runtimeDir, { recursive: true, force: true });
    },
  };
}
