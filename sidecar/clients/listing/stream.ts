import { once } from 'node:events';
import type { Response } from 'express';
import type { Logger } from '../../log.js';
import type { Sort, SortKey } from '../store/order.js';
import type { ClientReads } from '../store/reads.js';
import { encodeCursor, type PageCursor } from './cursor.js';
import type { RecordStreams } from './thread.js';

/**
 * Rows per database query while a whole listing streams: about 80 KB of JSON (records of about
 * 230 bytes) that PostgreSQL serialises and joins; this event loop receives one text value per
 * batch and writes it, a fraction of a millisecond: the longest stretch `/auth` can wait behind
 * a listing here. Kept under V8's 128 KB large-object threshold: larger strings live in the old
 * generation until a full collection. The sidecar's RSS climbed by 30 MB during a list of 10^5
 * with 1000 rows a batch, and by 46 MB with 500 once the record gained `expires_at`,
 * `last_used_at` and `previous_key_expires_at` (115 KB a batch); 17 MB with 350.
 */
export const STREAM_BATCH = 350;

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
  store: ClientReads,
  streams: RecordStreams,
  sort: Sort,
  cursor: PageCursor | null,
  log: Logger,
  namePrefix: string | null = null,
): Promise<void> {
  const from = cursor ? { direction: cursor.direction, key: cursor.key } : null;
  const batches = streams.streamRecords(sort, from, STREAM_BATCH, namePrefix);
  // The first batch before any header: a database fault still gets its JSON error.
  const firstBatch = await batches.next();
  const totalPromise = cursor
    ? namePrefix === null
      ? store.total()
      : store.totalWithPrefix(namePrefix)
    : null;
  // Awaited at the end; this only keeps an early rejection from counting as unhandled.
  totalPromise?.catch(() => undefined);
  res.status(200).set('Content-Type', 'application/json; charset=utf-8');
  let first: SortKey | undefined;
  let last: SortKey | undefined;
  let count = 0;
  try {
    let prefix = '{"items":[';
    let batch = firstBatch.done ? undefined : firstBatch.value;
    while (batch) {
      first ??= batch.first;
      last = batch.last;
      count += batch.count;
      res.write(prefix);
      prefix = ',';
      const more = res.write(batch.json);
      if (!more) await drained(res);
      if (res.destroyed) return;
      const next = await batches.next();
      batch = next.done ? undefined : next.value;
    }
    if (count === 0) res.write(prefix);
    const at = (direction: 'after' | 'before', key: SortKey | undefined) =>
      encodeCursor({ sort, direction, key: key ?? cursor!.key });
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
