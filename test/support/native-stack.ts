import { chmod, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../native/ports.js';
import { type RunningProcess, startProcess } from './process.js';
import type { Service, Stack, StackTls } from './stack.js';

const MAIN = join(import.meta.dirname, '../../dist/native/main.js');
const LOG_OF: Record<Service, string> = {
  proxy: 'nginx-error.log',
  gateway: 'sidecar.log',
  app: 'app.log',
  database: 'postgres.log',
};
const PID_OF: Partial<Record<Service, string>> = {
  proxy: 'nginx.pid',
  gateway: 'sidecar.pid',
  app: 'app.pid',
};

export interface NativeStackOptions {
  fqdn?: string;
  /** Extra environment for the runner (and so for the sidecar and the engine). */
  env?: Record<string, string>;
  /** Reuse an existing GATEWAY_HOME (for "two starts of one home" tests). */
  home?: string;
}

/** The native gateway (`node dist/native/main.js`, what `npm start` runs) in a fresh home. */
export async function startNativeStack(
  options: NativeStackOptions = {},
): Promise<Stack & { home: string }> {
  let home = options.home;
  if (!home) {
    home = await mkdtemp(join(tmpdir(), 'gw-e2e-'));
    // mkdtemp makes it owner-only; opened up, the data stays inside it and goes with it.
    await chmod(home, 0o755);
  }
  const port = await freePort();
  const fqdn = options.fqdn ?? 'localhost';
  const baseEnv: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    GATEWAY_HOME: home,
    GATEWAY_HTTPS_PORT: String(port),
    GATEWAY_FQDN: fqdn,
    ENGINE_ADMIN_PASSWORD: 'engine-admin-password',
    ...options.env,
  };
  let runner: RunningProcess;
  let output = '';
  const launch = async (env: Record<string, string>) => {
    runner = startProcess(process.execPath, [MAIN], { ...baseEnv, ...env });
    try {
      await runner.waitFor(/Gateway ready: /, 90_000);
    } finally {
      output += runner.stdout() + runner.stderr();
    }
  };
  await launch({ API_KEY_CREATE: 'true' });
  const adminKey = /NEWLY GENERATED API KEY: (\S+)/.exec(output)?.[1] ?? '';
  const stopRunner = async () => {
    const code = await runner.stop('SIGINT');
    output += runner.stdout() + runner.stderr();
    if (code !== 0) throw new Error(`the native gateway stopped with code ${code}:\n${output}`);
  };
  const configDir = join(home, 'config');
  return {
    kind: 'native',
    home,
    baseUrl: `https://${fqdn}:${port}`,
    fqdn,
    adminKey,
    configDir,
    // Revocation is pushed: the pair that served DELETE refuses the key before it answers.
    revocationBoundMs: 0,
    async tls(): Promise<StackTls> {
      return {
        ca: await readFile(join(configDir, 'nginx/ssl/nginx.crt'), 'utf8'),
        servername: fqdn,
      };
    },
    async restart(env = {}) {
      await stopRunner();
      await launch({ API_KEY_CREATE: 'false', ...env });
    },
    async logs(service) {
      const file = await readFile(join(home, 'logs', LOG_OF[service]), 'utf8').catch(() => '');
      return service === 'gateway' ? `${file}\n${output}${runner.stdout()}` : file;
    },
    async stopService(service) {
      if (service === 'database')
        throw new Error('the native stack cannot stop its embedded database alone');
      const pid = Number((await readFile(join(home, 'run', PID_OF[service]!), 'utf8')).trim());
      process.kill(pid, 'SIGTERM');
      for (let i = 0; i < 100; i += 1) {
        try {
          process.kill(pid, 0);
        } catch {
          return;
        }
        await new Promise((r) => setTimeout(r, 50));
      }
      throw new Error(`${service} (pid ${pid}) did not stop`);
    },
    async close() {
      await stopRunner();
      if (!options.home) await rm(home, { recursive: true, force: true });
    },
  };
}
