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

/** As DCT allows: both texts up to 1024 characters. */
export const MAX_TEXT = 1024;

/** RFC 3339 with an offset (`Z` or `+02:00`); whether it lies ahead is checked beside. */
const expiresAt = z.iso
  .datetime({ offset: true, error: 'must be an RFC 3339 time with an offset, or null' })
  .nullable()
  .optional();

const createSchema = z.strictObject({
  name: cleanText(MAX_TEXT),
  is_admin: z.boolean({ error: 'must be true or false' }),
  generate_api_key: z.boolean({ error: 'must be true or false' }),
  api_client_id: cleanText(MAX_TEXT).nullable().optional(),
  expires_at: expiresAt,
});

// The same rules as creation; every field optional, but at least one must be sent.
const updateSchema = z.strictObject({
  name: cleanText(MAX_TEXT).optional(),
  is_admin: z.boolean({ error: 'must be true or false' }).optional(),
  api_client_id: cleanText(MAX_TEXT).nullable().optional(),
  expires_at: expiresAt,
});

/**
 * An expiry must lie ahead of `now`: one in the past would create a client refused at once,
 * surely a mistake. Only a well-formed time is judged (the schema reports the others).
 */
function expiryInThePast(raw: Record<string, unknown>, now: number): ErrorDetail[] {
  const value = raw.expires_at;
  if (typeof value !== 'string' || !expiresAt.safeParse(value).success) return [];
  if (Date.parse(value) > now) return [];
  return [
    { code: 'INVALID_FIELD', field: 'expires_at', message: 'expires_at must lie in the future.' },
  ];
}

function toDate(value: string | null | undefined): Date | null | undefined {
  return typeof value === 'string' ? new Date(value) : value;
}

export interface CreateApiClientInput {
  name: string;
  isAdmin: boolean;
  generateApiKey: boolean;
  apiClientId: string | null;
  expiresAt: Date | null;
}

/** The fields a PUT changes; absent ones keep their values. */
export interface UpdateApiClientInput {
  name?: string;
  isAdmin?: boolean;
  /** null removes it (allowed only for a client that has an API key). */
  apiClientId?: string | null;
  /** null: never expires. */
  expiresAt?: Date | null;
}

export type Validated<T> = { ok: true; value: T } | { ok: false; errors: ErrorDetail[] };

/** Validates a creation body at `now` (ms), reporting every problem at once. */
export function parseCreateApiClient(
  body: unknown,
  now: number = Date.now(),
): Validated<CreateApiClientInput> {
  if (!isObject(body)) return NOT_AN_OBJECT;
  const result = createSchema.safeParse(body);
  const raw = body as Record<string, unknown>;
  const errors = result.success ? [] : result.error.issues.flatMap((i) => toDetails(i, raw));
  errors.push(...expiryInThePast(raw, now));
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
      expiresAt: toDate(v.expires_at) ?? null,
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

/**
 * Validates an update body (PUT) at `now` (ms): any of name, is_admin, api_client_id,
 * expires_at; every problem at once.
 */
export function parseUpdateApiClient(
  body: unknown,
  now: number = Date.now(),
): Validated<UpdateApiClientInput> {
  if (!isObject(body)) return NOT_AN_OBJECT;
  const result = updateSchema.safeParse(body);
  const raw = body as Record<string, unknown>;
  const errors = result.success ? [] : result.error.issues.flatMap((i) => toDetails(i, raw));
  errors.push(...expiryInThePast(raw, now));
  if (!result.success || errors.length > 0) return { ok: false, errors };
  const v = result.data;
  if (
    v.name === undefined &&
    v.is_admin === undefined &&
    v.api_client_id === undefined &&
    v.expires_at === undefined
  ) {
    return {
      ok: false,
      errors: [
        {
          code: 'INVALID_BODY',
          message: 'Send at least one of name, is_admin, api_client_id, expires_at.',
        },
      ],
    };
  }
  return {
    ok: true,
    value: {
      ...(v.name !== undefined ? { name: v.name } : {}),
      ...(v.is_admin !== undefined ? { isAdmin: v.is_admin } : {}),
      ...(v.api_client_id !== undefined ? { apiClientId: v.api_client_id } : {}),
      ...(v.expires_at !== undefined ? { expiresAt: toDate(v.expires_at) } : {}),
    },
  };
}

function isObject(body: unknown): body is Record<string, unknown> {
  return typeof body === 'object' && body !== null && !Array.isArray(body);
}

const NOT_AN_OBJECT = {
  ok: false as const,
  errors: [{ code: 'INVALID_BODY', message: 'The request body must be a JSON object.' }],
};
