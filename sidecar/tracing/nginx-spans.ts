import { createSocket, type Socket } from 'node:dgram';
import type { Logger } from '../log.js';
import type { NginxSpanExport } from './nginx-span-export.js';
import { readNginxSpanBatch } from './nginx-span-record.js';

/** `host:port` the sidecar listens on for nginx's span records (TRACING_NGINX_SPANS_LISTEN). */
export function parseSpansListen(value: string): { host: string; port: number } {
  const at = value.lastIndexOf(':');
  const port = Number(value.slice(at + 1));
  const host = value.slice(0, at).replace(/^\[(.*)\]$/, '$1');
  if (at <= 0 || !Number.isInteger(port) || port < 1 || port > 65_535) {
    throw new Error(`TRACING_NGINX_SPANS_LISTEN must be host:port, got ${JSON.stringify(value)}`);
  }
  return { host, port };
}

/** What the kernel may queue for the socket (capped by net.core.rmem_max): bursts of spans. */
const RECEIVE_BUFFER = 8 * 1024 * 1024;

/**
 * Receives nginx's span records (a datagram per batch of a worker's sampled requests, from the
 * module's gateway_span_log) and hands each to the export's batches (nginx-span-export.ts).
 */
export async function listenForNginxSpans(
  listen: { host: string; port: number },
  spans: NginxSpanExport,
  log: Logger,
): Promise<Socket> {
  const socket = createSocket(listen.host.includes(':') ? 'udp6' : 'udp4');
  let dropped = 0;
  socket.on('message', (message) => {
    const unreadable = readNginxSpanBatch(message, (record) => spans.add(record));
    if (unreadable === 0) return;
    // The first and then one for every thousand: a stray sender must not fill the log.
    const before = dropped;
    dropped += unreadable;
    if (before === 0 || Math.floor(before / 1000) < Math.floor(dropped / 1000))
      log.warn('tracing: unreadable span record(s) dropped', { dropped });
  });
  await new Promise<void>((resolve, reject) => {
    socket.once('error', reject);
    socket.bind(listen.port, listen.host, () => {
      socket.off('error', reject);
      socket.setRecvBufferSize(RECEIVE_BUFFER);
      resolve();
    });
  });
  log.info('tracing: receiving nginx span records', listen);
  return socket;
}
