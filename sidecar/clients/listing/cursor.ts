import { MAX_TEXT } from '../store/api-client.js';
import { isKeyOf, SORTS, type Sort, type SortKey, sortField } from '../store/order.js';

/** Where a page starts: after or before a row's key, in one order. */
export interface PageCursor {
  sort: Sort;
  direction: 'after' | 'before';
  key: SortKey;
}

/**
 * Cursors are opaque to clients: base64url of a small JSON. They name a position (a row's sort
 * key), not an offset, so inserts and deletes elsewhere never shift a page: a client that
 * existed throughout is seen exactly once. Nothing secret is inside; a forged cursor can only
 * name another position, which every admin may list anyway.
 */
export function encodeCursor(cursor: PageCursor): string {
  const json = JSON.stringify({
    s: cursor.sort,
    d: cursor.direction === 'after' ? 'a' : 'b',
    k: cursor.key,
  });
  return Buffer.from(json, 'utf8').toString('base64url');
}

/**
 * The longest cursor this gateway makes: a key holds one text of at most MAX_TEXT characters,
 * each at most 6 bytes of JSON (4 of UTF-8; 6 as a \u escape, for a row written outside the
 * API), beside a small frame; in base64url. A fixed 4096 refused the cursor after a name of
 * 1024 CJK characters (about 4160), so such a listing could not be paged on.
 */
const MAX_CURSOR = Math.ceil((6 * MAX_TEXT + 128) / 3) * 4;
const CURSOR_TEXT = new RegExp(`^[A-Za-z0-9_-]{1,${MAX_CURSOR}}$`);

/** The cursor, or null when the text is not one this gateway made. */
export function decodeCursor(text: string): PageCursor | null {
  if (!CURSOR_TEXT.test(text)) return null;
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
  } catch {
    return null;
  }
  if (typeof value !== 'object' || value === null) return null;
  const { s, d, k } = value as { s?: unknown; d?: unknown; k?: unknown };
  if (!SORTS.includes(s as Sort) || (d !== 'a' && d !== 'b') || !Array.isArray(k)) return null;
  const sort = s as Sort;
  if (!isKeyOf(k, sortField(sort))) return null;
  return { sort, direction: d === 'a' ? 'after' : 'before', key: k };
}
