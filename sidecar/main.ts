import { readConfig } from './config.js';
import { consoleLogger } from './log.js';
import { startSidecar } from './sidecar.js';

/** Entry point: `node dist/sidecar/main.js`, configured by DATABASE_URL, HOST, PORT, API_KEY_CREATE. */
async function main(): Promise<void> {
  const config = readConfig(process.env);
  const sidecar = await startSidecar(config, { log: consoleLogger });
  const stop = (signal: string) => {
    consoleLogger.info('stopping', { signal });
    sidecar.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
}

main().catch((err: unknown) => {
  consoleLogger.error('sidecar failed to start', { error: (err as Error).message });
  process.exit(1);
});
