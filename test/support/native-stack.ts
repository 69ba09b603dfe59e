import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../native/ports.js';
import {
  launchNativeGateway,
  type NativeGatewayProcess,
  type NativeRole,
} from './native-gateway.js';
import type { Service, Stack, StackTls } from './stack.js';

const LOG_OF: Record<Service, string> = {
  proxy: 'nginx-error.log',
  gateway: 'sidecar.log',
  app: 'app.log',
  database: 'postgres.log',
};
const ROLE_OF: Record<Service, NativeRole> = {
  proxy: 'nginx',
  gateway: 'sidecar',
  app: 'app',
  database: 'postgres',
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
): Promise<Stack & { home: string; gateway: () => NativeGatewayProcess }> {
  const home = options.home ?? (await mkdtemp(join(tmpdir(), 'gw-e2e-')));
  const port = await freePort();
  const fqdn = options.fqdn ?? 'localhost';
  let gateway: NativeGatewayProcess | undefined;
  let output = '';
  const launch = async (env: Record<string, string>) => {
    try {
      gateway = await launchNativeGateway({
        home,
        port,
        fqdn,
        env: { ENGINE_ADMIN_PASSWORD: 'engine-admin-password', ...options.env, ...env },
        readyTimeoutMs: 90_000,
      });
    } catch (err) {
      output += (err as Error).message;
      throw err;
    }
  };
  await launch({ API_KEY_CREATE: 'true' });
  const adminKey = gateway!.adminKey;
  const stopRunner = async () => {
    const code = await gateway!.stop();
    output += gateway!.output();
    if (code !== 0) throw new Error(`the native gateway stopped with code ${code}:\n${output}`);
  };
  const configDir = join(home, 'config');
  return {
    kind: 'native',
    home,
    gateway: () => gateway!,
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
      return service === 'gateway' ? `${file}\n${output}${gateway!.output()}` : file;
    },
    async stopService(service) {
      // Held down (run/<role>.down), or the runner would start it again at once.
      const role = ROLE_OF[service];
      const pid = await gateway!.pid(role);
      if (pid === undefined) throw new Error(`${service}: no pid file`);
      await writeFile(join(home, 'run', `${role}.down`), '');
      // PostgreSQL's SIGTERM waits for every client to leave (the sidecar's pools never do);
      // SIGINT is its fast shutdown, which ends them.
      process.kill(pid, role === 'postgres' ? 'SIGINT' : 'SIGTERM');
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
