import { z } from 'zod';
import { ValidationError } from '../errors/api-error.js';

const ID_PATTERN = /^[1-9][0-9]{0,15}$/;

/** A positive integer in canonical form (no sign, no leading zero) below 2^53. */
export function parseId(text: string): number | null {
  if (!ID_PATTERN.test(text)) return null;
  const id = Number(text);
  return Number.isSafeInteger(id) ? id : null;
}

/** The `{id}` path parameter of a client, as the document gives it (read with parseId). */
export const clientIdParams = z.strictObject({
  id: z
    .int()
    .min(1)
    .max(Number.MAX_SAFE_INTEGER)
    .meta({ description: 'The client id (`api_key_id`).' }),
});

/** The id in the path, or a 400. */
export function idParam(text: unknown): number {
  const id = typeof text === 'string' ? parseId(text) : null;
  if (id === null) {
    throw new ValidationError([
      { code: 'INVALID_ID', field: 'id', message: 'The id must be a positive integer.' },
    ]);
  }
  return id;
}
