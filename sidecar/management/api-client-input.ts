import { z } from 'zod';
import { isJsonObject, issueDetails, NOT_AN_OBJECT, type Validated } from './body-errors.js';

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

const SUBJECT = 'an API client';

const NAME = 'Unique; no control characters, no surrounding whitespace.';
const IS_ADMIN = 'May use the management API.';
const SUBJECT_ID =
  'The OIDC subject (claim value) that maps a bearer token to this client; null: none.';

/** A creation body (POST); also its description in the OpenAPI document. */
export const createApiClientSchema = z
  .strictObject({
    name: cleanText(MAX_TEXT).meta({ description: NAME }),
    is_admin: z.boolean({ error: 'must be true or false' }).meta({ description: IS_ADMIN }),
    generate_api_key: z
      .boolean({ error: 'must be true or false' })
      .meta({ description: 'Issue an API key (shown once, in the answer).' }),
    api_client_id: cleanText(MAX_TEXT)
      .nullable()
      .optional()
      .meta({ description: `${SUBJECT_ID} Required when generate_api_key is false.` }),
  })
  .meta({ id: 'ApiClientCreate', description: 'A new API client.' });

/** An update body (PUT): the same rules as creation; any field, at least one. */
export const updateApiClientSchema = z
  .strictObject({
    name: cleanText(MAX_TEXT).optional().meta({ description: NAME }),
    is_admin: z
      .boolean({ error: 'must be true or false' })
      .optional()
      .meta({ description: IS_ADMIN }),
    api_client_id: cleanText(MAX_TEXT)
      .nullable()
      .optional()
      .meta({ description: `${SUBJECT_ID} null only for a client with an API key.` }),
  })
  .meta({
    id: 'ApiClientUpdate',
    // Said here for the document; parseUpdateApiClient checks it (INVALID_BODY).
    minProperties: 1,
    description: 'The fields to change; absent ones keep their values. At least one.',
  });

export interface CreateApiClientInput {
  name: string;
  isAdmin: boolean;
  generateApiKey: boolean;
  apiClientId: string | null;
}

/** The fields a PUT changes; absent ones keep their values. */
export interface UpdateApiClientInput {
  name?: string;
  isAdmin?: boolean;
  /** null removes it (allowed only for a client that has an API key). */
  apiClientId?: string | null;
}

/** Validates a creation body, reporting every problem at once. */
export function parseCreateApiClient(body: unknown): Validated<CreateApiClientInput> {
  if (!isJsonObject(body)) return NOT_AN_OBJECT;
  const result = createApiClientSchema.safeParse(body);
  const raw = body as Record<string, unknown>;
  const errors = result.success
    ? []
    : result.error.issues.flatMap((i) => issueDetails(i, raw, SUBJECT));
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

/** Validates an update body (PUT): any of name, is_admin, api_client_id; every problem at once. */
export function parseUpdateApiClient(body: unknown): Validated<UpdateApiClientInput> {
  if (!isJsonObject(body)) return NOT_AN_OBJECT;
  const result = updateApiClientSchema.safeParse(body);
  const raw = body as Record<string, unknown>;
  if (!result.success) {
    return { ok: false, errors: result.error.issues.flatMap((i) => issueDetails(i, raw, SUBJECT)) };
  }
  const v = result.data;
  if (v.name === undefined && v.is_admin === undefined && v.api_client_id === undefined) {
    return {
      ok: false,
      errors: [
        {
          code: 'INVALID_BODY',
          message: 'Send at least one of name, is_admin, api_client_id.',
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
    },
  };
}
