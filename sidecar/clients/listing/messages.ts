import type { Sort, SortKey } from '../store/order.js';
import type { PageRequest } from '../store/reads.js';

/**
 * What the listing thread and the sidecar's main thread say to each other
 * (docs/decisions/20261127-listing-thread.md). One reader per side: `thread.ts` and
 * `worker.ts`.
 */

/** Main → worker: start a listing (its first batch is read at once), take a batch, or stop. */
export type ToListWorker =
  | {
      op: 'open';
      id: number;
      sort: Sort;
      from: PageRequest['from'];
      batch: number;
      namePrefix: string | null;
    }
  | { op: 'next'; id: number }
  | { op: 'close'; id: number };

/** Worker → main: a batch (its text as UTF-8, transferred, not copied), the end, or a fault. */
export type ListAnswer =
  | { id: number; batch: { json: Uint8Array; count: number; first: SortKey; last: SortKey } }
  | { id: number; done: true }
  | { id: number; error: { message: string; code: string | undefined } };

/** Worker → main: a line for the sidecar's one logger (the thread writes none itself). */
export interface ListLogLine {
  log: {
    level: 'debug' | 'info' | 'warn' | 'error';
    message: string;
    fields?: Record<string, unknown>;
  };
}

export type FromListWorker = ListAnswer | ListLogLine;
