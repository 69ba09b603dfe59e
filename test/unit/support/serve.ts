import { createServer, type RequestListener } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type DebugFields, debugFields, type Logger } from '../../../sidecar/log.js';

/** A handler on an in-process HTTP server on loopback: real requests, no other process. */
export async function serve(handler: RequestListener) {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** A logger that keeps what it was told, for asserting that faults are logged. */
export function recordingLogger() {
  const lines: { level: string; message: string; fields?: Record<string, unknown> }[] = [];
  const at =
    (level: string) =>
    (message: string, given?: DebugFields): void => {
      const fields = debugFields(given);
      lines.push({ level, message, ...(fields ? { fields } : {}) });
    };
  const log: Logger = {
    debug: at('debug'),
    info: at('info'),
    warn: at('warn'),
    error: at('error'),
    child: () => log,
  };
  return { log, lines };
}
