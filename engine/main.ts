import { optionsFromEnv } from './env.js';
import { startEngine } from './server.js';
import { SettingsError } from './settings.js';
import { formatVersion } from './versions.js';

/** Starts the engine from the environment; prints one line when listening. */
async function main(): Promise<void> {
  const engine = await startEngine(optionsFromEnv(process.env));
  if (engine.generatedAdminPassword !== undefined) {
    // One line, so an operator (or a test) can pick it out of the log. The engine keeps no
    // state: the native run generates one password per home and passes it in instead.
    process.stdout.write(
      `NEWLY GENERATED ENGINE ADMIN PASSWORD for ${engine.adminUser}: ${engine.generatedAdminPassword}\n`,
    );
  }
  const versions = engine.settings.versions.map(formatVersion).join(', ');
  process.stdout.write(`engine listening on ${engine.url} (API versions ${versions})\n`);

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    engine.close().then(
      () => {
        process.stdout.write(`engine stopped (${signal})\n`);
        process.exit(0);
      },
      (err: unknown) => {
        process.stderr.write(`engine: failed to stop: ${String(err)}\n`);
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

main().catch((err: unknown) => {
  process.stderr.write(
    err instanceof SettingsError ? `${err.message}\n` : `engine: failed to start: ${String(err)}\n`,
  );
  process.exit(1);
});
