import { createSocket, type Socket } from 'node:dgram';
import type { SpanContext } from '@opentelemetry/api';
import type { ReadableSpan, SpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { Logger } from '../log.js';
import { type NginxSpanRecord, parseNginxSpanRecord } from './nginx-span-record.js';

type Resource = ReadableSpan['resource'];

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

const SAMPLED = 1;
const hrTime = (ms: number): [number, number] => [Math.floor(ms / 1000), (ms % 1000) * 1e6];

/** A record as the SDK's finished span: the gateway's, named for its method. */
export function gatewaySpan(record: NginxSpanRecord, resource: Resource): ReadableSpan {
  const context: SpanContext = {
    traceId: record.traceId,
    spanId: record.spanId,
    traceFlags: SAMPLED,
  };
  const parent: SpanContext | undefined = record.parentId
    ? { traceId: record.traceId, spanId: record.parentId, traceFlags: SAMPLED, isRemote: true }
    : undefined;
  return {
    name: `gateway ${record.method}`,
    kind: 1, // SERVER
    spanContext: () => context,
    parentSpanContext: parent,
    startTime: hrTime(record.startMs),
    endTime: hrTime(record.endMs),
    duration: hrTime(record.endMs - record.startMs),
    // An error for the server when nginx (or the app behind it) answered 5xx.
    status: { code: record.status >= 500 ? 2 : 0 },
    attributes: {
      'http.request.method': record.method,
      'url.path': record.path,
      'http.response.status_code': record.status,
      ...(record.clientId === undefined ? {} : { 'enduser.id': record.clientId }),
      ...(record.authMethod === undefined ? {} : { 'gateway.auth.method': record.authMethod }),
    },
    links: [],
    events: [],
    ended: true,
    resource,
    instrumentationScope: { name: 'gateway-nginx' },
    droppedAttributesCount: 0,
    droppedEventsCount: 0,
    droppedLinksCount: 0,
  };
}

/**
 * Receives nginx's span records (one syslog datagram per sampled request) and hands each to
 * the batch processor as a finished span: exported with the sidecar's own, in batches.
 */
export async function listenForNginxSpans(
  listen: { host: string; port: number },
  processor: SpanProcessor,
  resource: Resource,
  log: Logger,
): Promise<Socket> {
  const socket = createSocket(listen.host.includes(':') ? 'udp6' : 'udp4');
  let dropped = 0;
  socket.on('message', (message) => {
    const record = parseNginxSpanRecord(message.toString('utf8'));
    if (record) processor.onEnd(gatewaySpan(record, resource));
    else if (++dropped % 1000 === 1)
      log.warn('tracing: unreadable span record(s) dropped', { dropped });
  });
  await new Promise<void>((resolve, reject) => {
    socket.once('error', reject);
    socket.bind(listen.port, listen.host, () => {
      socket.off('error', reject);
      resolve();
    });
  });
  log.info('tracing: receiving nginx span records', listen);
  return socket;
}
