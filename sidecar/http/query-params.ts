import { z } from 'zod';
import type { ErrorDetail } from '../errors/api-error.js';
import type { Validated } from './body-errors.js';
import { parseId } from './numeric-id.js';

/**
 * Reads a query string against its documented schema (the one the OpenAPI document shows), so
 * the two cannot drift. A query arrives as text: a parameter the schema types as an integer is
 * read as a canonical decimal (parseId) first; every other one is checked as the text it is.
 * Every problem is reported at once: UNKNOWN_FIELD for a parameter the schema does not name,
 * INVALID_FIELD with `messages[name]` for a bad value, or when a parameter is given twice.
 */
export function readQuery<S extends z.ZodObject>(
  schema: S,
  query: Record<string, unknown>,
  messages: { [K in keyof S['shape']]: string },
): Validated<Partial<z.infer<S>>> {
  const shape = schema.shape as Record<string, z.ZodType>;
  const errors: ErrorDetail[] = [];
  const value: Record<string, unknown> = {};
  for (const [name, raw] of Object.entries(query)) {
    const field = shape[name];
    if (!field) {
      errors.push({
        code: 'UNKNOWN_FIELD',
        field: name,
        message: `${name} is not a query parameter.`,
      });
      continue;
    }
    if (typeof raw !== 'string') {
      errors.push({ code: 'INVALID_FIELD', field: name, message: `${name} must be given once.` });
      continue;
    }
    const typed = isInteger(field) ? parseId(raw) : raw;
    if (typed === null || !field.safeParse(typed).success) {
      errors.push({
        code: 'INVALID_FIELD',
        field: name,
        message: messages[name as keyof S['shape']],
      });
      continue;
    }
    value[name] = typed;
  }
  if (errors.length > 0) return { ok: false, errors };
  return { ok: true, value: value as Partial<z.infer<S>> };
}

function isInteger(field: z.ZodType): boolean {
  const inner = field instanceof z.ZodOptional ? field.unwrap() : field;
  return inner instanceof z.ZodNumber;
}
