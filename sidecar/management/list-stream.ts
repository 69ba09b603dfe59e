import { once } from 'node:events';
import type { Response } from 'express';
import { type ApiClientRow, toRecord } from '../clients/api-client.js';
import { keyOf, type Sort, sortField } from '../clients/client-order.js';
import type { ClientStore } from '../clients/client-store.js';
import type { Logger } from '../log.js';
import { encodeCursor, type PageCursor } from './page-cursor.js';

/**
 * Rows per database query while a whole listing streams. 500 rows are about 90 KB of JSON and
 * under a millisecond of parsing and serialising: the longest stretch `/auth` can wait behind a
 * listing on this event loop. Larger batches were no faster to the last byte.
 */
export const STREAM_BATCH = 500;

/**
 * Every client from the cursor on (the spec's "lists all"), written as it is read: the same
 * body `listResponse` builds for a page without `limit`, in constant memory whatever the size
 * of the table. Each batch waits for the previous one to leave (backpressure), so a caller that
 * reads slowly holds one batch here, not the table.
 *
 * `total` without a cursor is the number of items in the body, exact and free: it is counted as
 * they go, and response_metadata comes after items. With a cursor it is the store's total.
 * A database fault before the first byte is an ordinary error answer; after it, the response is
 * cut (the caller sees a truncated body, never a well-formed partial list).
 */
export async function streamList(
  res: Response,
  store: ClientStore,
  sort: Sort,
  cursor: PageCursor | null,
  log: Logger,
): Promise<void> {
  const field = sortField(sort);
  const from = cursor ? { direction: cursor.direction, key: cursor.key } : null;
  const batches = store.stream(sort, from, STREAM_BATCH);
  // The first batch before any header: a database fault still gets its JSON error.
  const firstBatch = await batches.next();
  const totalPromise = cursor ? store.total() : null;
  // Not awaited yet; a rejection is handled where it is awaited, this only avoids an unhandled one.
  totalPromise?.catch(() => undefined);
  res.status(200).set('Content-Type', 'application/json; charset=utf-8');
  let first: ApiClientRow | undefined;
  let last: ApiClientRow | undefined;
  let count = 0;
  try {
    let prefix = '{"items":[';
    let batch = firstBatch.done ? undefined : firstBatch.value;
    while (batch) {
      first ??= batch[0];
      last = batch[batch.length - 1];
      count += batch.length;
      let chunk = prefix;
      for (let i = 0; i < batch.length; i += 1) {
        chunk += (i === 0 ? '' : ',') + JSON.stringify(toRecord(batch[i]!));
      }
      prefix = ',';
      if (!res.write(chunk)) await drained(res);
      if (res.destroyed) return;
      const next = await batches.next();
      batch = next.done ? undefined : next.value;
    }
    if (count === 0) res.write(prefix);
    const at = (direction: 'after' | 'before', row: ApiClientRow | undefined) =>
      encodeCursor({ sort, direction, key: row ? keyOf(row, field) : cursor!.key });
    // As listResponse for a page that reached the end: nothing follows it in the direction read.
    const next = cursor?.direction === 'before' ? at('after', last) : null;
    const prev = cursor && cursor.direction !== 'before' ? at('before', first) : null;
    const total = totalPromise ? await totalPromise : count;
    res.end(
      `],"response_metadata":${JSON.stringify({ total, next_cursor: next, prev_cursor: prev })}}`,
    );
  } catch (err) {
    log.error('listing cut short', { error: (err as Error).message, written: count });
    res.destroy();
  } finally {
    await batches.return(undefined);
  }
}

/** Resolves when the response can take more, or when the caller has gone. */
async function drained(res: Response): Promise<void> {
  if (res.destroyed) return;
  // Whichever comes first; the other listener is removed, or thousands of drains would pile up.
  const settled = new AbortController();
  try {
    await Promise.race([
      once(res, 'drain', { signal: settled.signal }),
      once(res, 'close', { signal: settled.signal }),
    ]);
  } finally {
    settled.abort();
  }
}
