import { z } from 'zod';
import type { ErrorDetail } from '../../errors/api-error.js';
import type { Validated } from '../../http/body-errors.js';
import { parseId } from '../../http/numeric-id.js';
import { SORTS, type Sort } from '../store/order.js';
import { decodeCursor, type PageCursor } from './cursor.js';

export interface ListQuery {
  sort: Sort;
  /** null: every client from the cursor on. */
  limit: number | null;
  cursor: PageCursor | null;
  /** Only clients whose name starts with this, ignoring case; null: all. */
  name: string | null;
}

/**
 * The list's query parameters as the document gives them. A query arrives as text: `limit` is
 * read as a canonical decimal (parseId) and then checked against this schema's range.
 */
export const listQuerySchema = z.strictObject({
  limit: z
    .int()
    .min(1)
    .max(1000)
    .optional()
    .meta({ description: 'Page size, 1 to 1000. Absent: every client from the cursor on.' }),
  sort: z
    .enum(SORTS)
    .optional()
    .meta({ description: "Order; `-` descends. Default `id`, or the cursor's order." }),
  cursor: z.string().optional().meta({
    description: 'Opaque: `next_cursor` or `prev_cursor` of a previous page.',
  }),
  name: z
    .string()
    .min(1)
    .max(1024)
    .optional()
    .meta({
      description:
        'Only clients whose name starts with this text, ignoring case (an index serves it). A ' +
        'cursor does not carry it: send it again with `cursor`.',
    }),
});

const FIELDS = listQuerySchema.shape;
const KNOWN = new Set(Object.keys(FIELDS));

/**
 * `sort` (id, -id, name, -name, api_client_id, -api_client_id; default id), `limit` (1 to
 * 1000), `cursor` (opaque, from response_metadata) and `name` (a prefix); nothing else. A cursor carries its own
 * order: `sort` may be left out with it, but may not name another order.
 */
export function parseListQuery(query: Record<string, unknown>): Validated<ListQuery> {
  const errors: ErrorDetail[] = [];
  for (const key of Object.keys(query)) {
    if (!KNOWN.has(key)) {
      errors.push({
        code: 'UNKNOWN_FIELD',
        field: key,
        message: `${key} is not a query parameter.`,
      });
    }
  }
  let limit: number | null = null;
  if (query.limit !== undefined) {
    const n = typeof query.limit === 'string' ? parseId(query.limit) : null;
    if (n === null || !FIELDS.limit.safeParse(n).success) {
      errors.push({
        code: 'INVALID_FIELD',
        field: 'limit',
        message: 'limit must be an integer from 1 to 1000.',
      });
    } else limit = n;
  }
  let sort: Sort | undefined;
  if (query.sort !== undefined) {
    if (FIELDS.sort.safeParse(query.sort).success) {
      sort = query.sort as Sort;
    } else {
      errors.push({
        code: 'INVALID_FIELD',
        field: 'sort',
        message: `sort must be one of ${SORTS.join(', ')}.`,
      });
    }
  }
  let cursor: PageCursor | null = null;
  if (query.cursor !== undefined) {
    cursor = typeof query.cursor === 'string' ? decodeCursor(query.cursor) : null;
    if (cursor === null) {
      errors.push({ code: 'INVALID_FIELD', field: 'cursor', message: 'cursor is not valid.' });
    } else if (sort !== undefined && sort !== cursor.sort) {
      errors.push({
        code: 'INVALID_FIELD',
        field: 'cursor',
        message: `cursor belongs to sort=${cursor.sort}; send that sort or none.`,
      });
    }
  }
  let name: string | null = null;
  if (query.name !== undefined) {
    if (typeof query.name === 'string' && FIELDS.name.safeParse(query.name).success) {
      name = query.name;
    } else {
      errors.push({
        code: 'INVALID_FIELD',
        field: 'name',
        message: 'name must be given once, 1 to 1024 characters.',
      });
    }
  }
  if (errors.length > 0) return { ok: false, errors };
  return { ok: true, value: { sort: cursor?.sort ?? sort ?? 'id', limit, cursor, name } };
}
