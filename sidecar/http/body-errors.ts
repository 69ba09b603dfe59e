import type { z } from 'zod';
import type { ErrorDetail } from '../errors/api-error.js';

/** A parsed request part, or every problem found in it. */
export type Validated<T> = { ok: true; value: T } | { ok: false; errors: ErrorDetail[] };

/** A JSON body that is an object (not an array, null or a scalar). */
export function isJsonObject(body: unknown): body is Record<string, unknown> {
  return typeof body === 'object' && body !== null && !Array.isArray(body);
}

export const NOT_AN_OBJECT = {
  ok: false as const,
  errors: [{ code: 'INVALID_BODY', message: 'The request body must be a JSON object.' }],
};

/**
 * One zod issue of a body as error details: UNKNOWN_FIELD for each unexpected key (naming
 * `subject`, e.g. "an API client"), MISSING_FIELD for an absent one, INVALID_FIELD otherwise.
 */
export function issueDetails(
  issue: z.core.$ZodIssue,
  raw: Record<string, unknown>,
  subject: string,
): ErrorDetail[] {
  if (issue.code === 'unrecognized_keys') {
    return issue.keys.map((key) => ({
      code: 'UNKNOWN_FIELD',
      field: key,
      message: `${key} is not a field of ${subject}.`,
    }));
  }
  const field = issue.path.join('.');
  const missing = issue.path.length === 1 && raw[String(issue.path[0])] === undefined;
  return [
    {
      code: missing ? 'MISSING_FIELD' : 'INVALID_FIELD',
      field,
      message: missing ? `${field} is required.` : `${field} ${issue.message}.`,
    },
  ];
}
