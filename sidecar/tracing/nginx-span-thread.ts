import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';

/** What the sidecar gives the thread that receives and exports nginx's span records. */
export interface NginxSpanWorkerData {
  endpoint: string;
  listen: { host: string; port: number };
}

/** The thread's messages to the sidecar: its log lines, then ready (or failed), then done. */
export type FromNginxSpanWorker =
  | { log: { level: 'info' | 'warn' | 'error'; message: string; fields?: Record<string, unknown> } }
  | { ready: true }
  | { failed: string }
  | { done: true };

/**
 * The niceness of the span thread: the lowest priority. At sampling 1.0 the records come as ~60 KB
 * datagrams, each about a millisecond of work here; at the normal priority that work preempted
 * nginx's workers on the same core, and the callers' requests waiting behind them left the other
 * core idle (the bench's tracing row: 0.23 cores idle against 0.15 with tracing off, 0.17 at
 * this niceness; docs/decisions/20261203-nginx-span-export.md). Spans wait; requests do not.
 */
export const SPAN_THREAD_NICENESS = 19;

/** Lowers this thread alone (Linux: setpriority on its thread id); false where it cannot. */
export function lowerThisThread(niceness: number): boolean {
  try {
    // "/proc/thread-self" links to "<pid>/task/<tid>".
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
    if (!Number.isInteger(tid) || tid <= 0) return false;
    setPriority(tid, niceness);
    return true;
  } catch {
    return false;
  }
}
