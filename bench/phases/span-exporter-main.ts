import type { Logger } from '../../sidecar/log.js';
import { startTracing } from '../../sidecar/tracing/start-tracing.js';

/**
 * The tracing row's exporter (bench/phases/tracing.ts): the sidecar's own receiver of nginx's
 * span records and its OTLP/HTTP export, in a process of its own as it is in the sidecar, so its
 * CPU is its own tree and its heap is not the bench's. Arguments: the collector's URL, the
 * UDP port. Says `ready` on stdout once listening; SIGTERM sends what it holds, then exits.
 */
const [endpoint, port] = process.argv.slice(2);
const say = (level: string) => (message: string, fields?: object) =>
  process.stderr.write(`tracing ${level}: ${message} ${JSON.stringify(fields ?? {})}\n`);
const log: Logger = {
  debug: () => {},
  info: () => {},
  warn: say('warn'),
  error: say('error'),
  child: () => log,
};
const exporter = await startTracing(endpoint!, log, { host: '127.0.0.1', port: Number(port) });
process.once('SIGTERM', () => {
  void exporter.shutdown().finally(() => process.exit(0));
});
process.stdout.write('ready\n');
