import type { ApiClientRow } from './api-client.js';

/** The orders a listing can take; `-` means descending. */
export const SORTS = ['id', '-id', 'name', '-name', 'api_client_id', '-api_client_id'] as const;
export type Sort = (typeof SORTS)[number];
export type SortField = 'id' | 'name' | 'api_client_id';

/** A position in one order: the values of the row's sort key, id always last (a tiebreaker). */
export type SortKey = readonly (string | number | boolean)[];

export function sortField(sort: Sort): SortField {
  return (sort.startsWith('-') ? sort.slice(1) : sort) as SortField;
}

export function isDescending(sort: Sort): boolean {
  return sort.startsWith('-');
}

/**
 * The SQL expressions of each order's key. api_client_id may be NULL, and a row comparison with
 * NULL is unknown, so that key is (is null, value or '', id): NULLs last ascending, first
 * descending, and every row has a total position.
 */
export const KEY_SQL: Readonly<Record<SortField, readonly string[]>> = {
  id: ['id'],
  name: ['name', 'id'],
  api_client_id: ['(api_client_id IS NULL)', "COALESCE(api_client_id, '')", 'id'],
};

/** The key of `row` in the order of `field`, exactly as KEY_SQL computes it. */
export function keyOf(
  row: Pick<ApiClientRow, 'id' | 'name' | 'apiClientId'>,
  field: SortField,
): SortKey {
  switch (field) {
    case 'id':
      return [row.id];
    case 'name':
      return [row.name, row.id];
    case 'api_client_id':
      return [row.apiClientId === null, row.apiClientId ?? '', row.id];
  }
}

/** Whether `key` has the shape of a key of `field` (a cursor may have been forged). */
export function isKeyOf(key: readonly unknown[], field: SortField): key is SortKey {
  const id = key[key.length - 1];
  if (!Number.isSafeInteger(id) || (id as number) < 1) return false;
  switch (field) {
    case 'id':
      return key.length === 1;
    case 'name':
      return key.length === 2 && typeof key[0] === 'string';
    case 'api_client_id':
      return key.length === 3 && typeof key[0] === 'boolean' && typeof key[1] === 'string';
  }
}
