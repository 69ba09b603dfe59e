import { parentPort, workerData } from 'node:worker_threads';
import type { Logger } from '../log.js';
import { exportNginxSpans } from './nginx-span-export.js';
import {
  type FromNginxSpanWorker,
  lowerThisThread,
  type NginxSpanWorkerData,
  SPAN_THREAD_NICENESS,
} from './nginx-span-thread.js';
import { listenForNginxSpans } from './nginx-spans.js';

/**
 * The thread that receives nginx's span records and exports them (start-tracing.ts starts it):
 * at the lowest priority, its log lines sent to the sidecar's log.
 */

const port = parentPort!;
const send = (message: FromNginxSpanWorker) => port.postMessage(message);
const line =
  (level: 'info' | 'warn' | 'error') =>
  (message: string, fields?: Record<string, unknown>): void =>
    send({ log: { level, message, fields } });
const log: Logger = {
  debug: () => {},
  info: line('info'),
  warn: line('warn'),
  error: line('error'),
  child: () => log,
};

const { endpoint, listen } = workerData as NginxSpanWorkerData;
const lowered = lowerThisThread(SPAN_THREAD_NICENESS);
try {
  const spans = exportNginxSpans(endpoint, log);
  const socket = await listenForNginxSpans(listen, spans, log);
  if (!lowered) log.warn('tracing: the span thread runs at the normal priority', {});
  port.on('message', () => {
    // The one message the sidecar sends: shut down (the last batch sent first).
    socket.close();
    void spans.shutdown().finally(() => send({ done: true }));
  });
  send({ ready: true });
} catch (err) {
  send({ failed: err instanceof Error ? err.message : String(err) });
}
