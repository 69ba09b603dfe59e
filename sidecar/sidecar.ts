import type { AddressInfo } from 'node:net';
import { createBootstrapKeyIfAsked } from './bootstrap.js';
import { ChangeListener } from './clients/change-listener.js';
import { ClientCache } from './clients/client-cache.js';
import { ClientStore } from './clients/client-store.js';
import type { SidecarConfig } from './config.js';
import { migrate } from './db/migrate.js';
import { createPool } from './db/pool.js';
import type { Logger } from './log.js';
import { createSidecarServer } from './server.js';

export interface RunningSidecar {
  url: string;
  port: number;
  close(): Promise<void>;
}

export interface StartOptions {
  log: Logger;
  env?: NodeJS.ProcessEnv;
  /** Where the bootstrap line goes; stdout in production. */
  print?: (line: string) => void;
}

/** Waits for the database (retrying: containers may start in any order), migrates, serves. */
export async function startSidecar(
  config: SidecarConfig,
  { log, env = process.env, print = (line) => process.stdout.write(`${line}\n`) }: StartOptions,
): Promise<RunningSidecar> {
  const pool = createPool(config.databaseUrl, log);
  await retry(() => migrate(pool, log), log);
  const cache = new ClientCache();
  const listener = new ChangeListener(config.databaseUrl, cache, log);
  await listener.start();
  await createBootstrapKeyIfAsked(env, new ClientStore(pool), print);
  const server = createSidecarServer({ pool, cache, log });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  log.info('sidecar listening', { host: config.host, port });
  return {
    url: `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`,
    port,
    async close() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      await listener.stop();
      await pool.end();
    },
  };
}

async function retry<T>(action: () => Promise<T>, log: Logger): Promise<T> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await action();
    } catch (err) {
      const delay = Math.min(250 * 2 ** (attempt - 1), 5_000);
      log.warn('database not ready; retrying', { attempt, error: (err as Error).message, delay });
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
  }
}
