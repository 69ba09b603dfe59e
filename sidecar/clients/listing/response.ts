import { z } from 'zod';
import { type ApiClientRow, apiClientRecordSchema, toRecord } from '../store/api-client.js';
import type { Sort, SortKey } from '../store/order.js';
import type { Page } from '../store/reads.js';
import { encodeCursor, type PageCursor } from './cursor.js';

const cursorText = z.string().nullable();

/** The listing body (paged or streamed) as a schema, for the OpenAPI document and tests. */
export const apiClientListSchema = z
  .strictObject({
    items: z.array(apiClientRecordSchema),
    response_metadata: z.strictObject({
      total: z.int().min(0).meta({ description: 'How many clients the listing holds.' }),
      next_cursor: cursorText.meta({ description: "The next page's `cursor`, or null." }),
      prev_cursor: cursorText.meta({ description: "The previous page's `cursor`, or null." }),
    }),
  })
  .meta({ id: 'ApiClientList', description: "A page of API clients, in the listing's order." });

/**
 * The listing body, as DCT shapes it: `items` and `response_metadata` with `total`,
 * `next_cursor` and `prev_cursor` (null where there is nothing to go to). A page read forwards
 * knows whether more follow; one read backwards, whether more precede. The other side of a page
 * reached through a cursor always exists (the client came from there), so its cursor is given.
 */
export function listResponse(
  page: Page,
  sort: Sort,
  cursor: PageCursor | null,
  keyOf: (row: ApiClientRow) => SortKey,
): z.infer<typeof apiClientListSchema> {
  const first = page.rows[0];
  const last = page.rows[page.rows.length - 1];
  const at = (direction: 'after' | 'before', key: SortKey) =>
    encodeCursor({ sort, direction, key });
  let next: string | null = null;
  let prev: string | null = null;
  if (cursor?.direction === 'before') {
    prev = page.more && first ? at('before', keyOf(first)) : null;
    next = at('after', last ? keyOf(last) : cursor.key);
  } else {
    next = page.more && last ? at('after', keyOf(last)) : null;
    if (cursor) prev = at('before', first ? keyOf(first) : cursor.key);
  }
  return {
    items: page.rows.map((row) => toRecord(row)),
    response_metadata: { total: page.total, next_cursor: next, prev_cursor: prev },
  };
}
