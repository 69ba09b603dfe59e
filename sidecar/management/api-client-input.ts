import { z } from 'zod';
import type { ErrorDetail } from '../errors/api-error.js';

/**
 * Text that may be stored and later passed upstream in a header (percent-encoded): no
 * control characters, no line or paragraph separators, no bidirectional overrides
 * ("Trojan Source"), no unpaired surrogates, no surrounding whitespace.
 */
function cleanText(max: number) {
  return z
    .string({ error: 'must be a string' })
    .min(1, 'must not be empty')
    .max(max, `must be at most ${max} characters`)
    .refine(
      // With the u flag a lone surrogate is a code point of category Cs.
      (s) => !/[\p{Cc}\p{Cs}\u2028\u2029\u202a-\u202e\u2066-\u2069]/u.test(s),
      'must not contain control characters, unpaired surrogates, line separators or bidirectional overrides',
    )
    .refine((s) => s.trim() === s, 'must not start or end with whitespace');
}

const createSchema = z.strictObject({
  name: cleanText(200),
  is_admin: z.boolean({ error: 'must be true or false' }),
  generate_api_key: z.boolean({ error: 'must be true or false' }),
  api_client_id: cleanText(255).nullable().optional(),
});

export interface CreateApiClientInput {
  name: string;
  isAdmin: boolean;
  generateApiKey: boolean;
  apiClientId: string | null;
}

export type Validated<T> = { ok: true; value: T } | { ok: false; errors: ErrorDetail[] };

/** Validates a creation body, reporting every problem at once. */
export function parseCreateApiClient(body: unknown): Validated<CreateApiClientInput> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    return {
      ok: false,
      errors: [{ code: 'INVALID_BODY', message: 'The request body must be a JSON object.' }],
    };
  }
  const result = createSchema.safeParse(body);
  const raw = body as Record<string, unknown>;
  const errors = result.success ? [] : result.error.issues.flatMap((i) => toDetails(i, raw));
  // Checked beside the schema, not after it, so this error is reported with all others.
  if (
    raw.generate_api_key === false &&
    (raw.api_client_id === undefined || raw.api_client_id === null)
  ) {
    errors.push({
      code: 'MISSING_FIELD',
      field: 'api_client_id',
      message: 'api_client_id is required when generate_api_key is false.',
    });
  }
  if (!result.success || errors.length > 0) return { ok: false, errors };
  const v = result.data;
  return {
    ok: true,
    value: {
      name: v.name,
      isAdmin: v.is_admin,
      generateApiKey: v.generate_api_key,
      apiClientId: v.api_client_id ?? null,
    },
  };
}

function toDetails(issue: z.core.$ZodIssue, raw: Record<string, unknown>): ErrorDetail[] {
  if (issue.code === 'unrecognized_keys') {
    return issue.keys.map((key) => ({
      code: 'UNKNOWN_FIELD',
      field: key,
      message: `${key} is not a field of an API client.`,
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

const ID_PATTERN = /^[1-9][0-9]{0,15}$/;

/** A positive integer in canonical form (no sign, no leading zero) below 2^53. */
export function parseId(text: string): number | null {
  if (!ID_PATTERN.test(text)) return null;
  const id = Number(text);
  return Number.isSafeInteger(id) ? id : null;
}

export interface ListQuery {
  limit: number | null;
  afterId: number;
}

/** `limit` (1 to 1000) and `cursor` (opaque: the last id of the previous page); nothing else. */
export function parseListQuery(query: Record<string, unknown>): Validated<ListQuery> {
  const errors: ErrorDetail[] = [];
  for (const key of Object.keys(query)) {
    if (key !== 'limit' && key !== 'cursor') {
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
    if (n === null || n > 1000) {
      errors.push({
        code: 'INVALID_FIELD',
        field: 'limit',
        message: 'limit must be an integer from 1 to 1000.',
      });
    } else limit = n;
  }
  let afterId = 0;
  if (query.cursor !== undefined) {
    const n = typeof query.cursor === 'string' ? parseId(query.cursor) : null;
    if (n === null) {
      errors.push({ code: 'INVALID_FIELD', field: 'cursor', message: 'cursor is not valid.' });
    } else afterId = n;
  }
  return errors.length > 0 ? { ok: false, errors } : { ok: true, value: { limit, afterId } };
}
