import { readConfig } from './config.js';
import { createLogger, type Logger } from './log.js';
import { type RunningSidecar, startSidecar } from './sidecar.js';

// Until LOG_LEVEL is read: a bad configuration is still reported as a JSON line.
let log: Logger = createLogger('info');

/**
 * Entry point: `node dist/sidecar/main.js`, configured by DATABASE_URL, HOST and PORT (or SOCKET),
 * METRICS_LISTEN, LOG_LEVEL, API_KEY_CREATE, and the OIDC_* variables of sidecar/oidc/settings.ts.
 */
async function main(): Promise<void> {
  const config = readConfig(process.env);
  log = createLogger(config.logLevel);
  let sidecar: RunningSidecar | null = null;
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info('stopping', { signal });
    // A signal during start-up (while waiting for the database) just ends the process.
    if (!sidecar) process.exit(0);
    sidecar.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  // Installed before start-up, so a stop request is never met by the default (abrupt) action.
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  sidecar = await startSidecar(config, { log });
  if (stopping) await sidecar.close().then(() => process.exit(0));
}

main().catch((err: unknown) => {
  log.error('sidecar failed to start', { error: (err as Error).message });
  process.exit(1);
});
