import { z } from 'zod';
import { type Permissions, validatePermissions } from '../../../common/permissions.js';
import type { ErrorDetail } from '../../errors/api-error.js';
import {
  isJsonObject,
  issueDetails,
  NOT_AN_OBJECT,
  type Validated,
} from '../../http/body-errors.js';
import {
  MAX_TEXT,
  permissionsSchema,
  type RateLimit,
  rateLimitSchema,
} from '../store/api-client.js';

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

/** RFC 3339 with an offset (`Z` or `+02:00`); whether it lies ahead is checked beside. */
const expiresAt = z.iso
  .datetime({ offset: true, error: 'must be an RFC 3339 time with an offset, or null' })
  .nullable()
  .optional();

const EXPIRES_AT =
  'From then on the client is refused (API_CLIENT_EXPIRED): a future RFC 3339 time with an ' +
  'offset; null: never.';

const SUBJECT = 'an API client';

const RATE_LIMIT =
  'At most `requests` per `per_seconds`, counted by each gateway pair on its own; null: none.';
const rateLimit = rateLimitSchema.nullable().optional();

const permissions = permissionsSchema.optional();

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
    expires_at: expiresAt.meta({ description: EXPIRES_AT }),
    rate_limit: rateLimit.meta({ description: RATE_LIMIT }),
    permissions,
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
    expires_at: expiresAt.meta({ description: EXPIRES_AT }),
    rate_limit: rateLimit.meta({ description: RATE_LIMIT }),
    permissions,
  })
  .meta({
    id: 'ApiClientUpdate',
    // Said here for the document; parseUpdateApiClient checks it (INVALID_BODY).
    minProperties: 1,
    description: 'The fields to change; absent ones keep their values. At least one.',
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

/**
 * The body as the schema judges it: without permissions, which validatePermissions judges in
 * words that name the rule (`permissions[3].path must not have a . or .. segment`). The schema
 * still describes the field in the OpenAPI document.
 */
function forSchema(raw: Record<string, unknown>): Record<string, unknown> {
  const { permissions: _judgedApart, ...rest } = raw;
  return rest;
}

function schemaErrors(
  result: { success: true } | { success: false; error: z.ZodError },
  raw: Record<string, unknown>,
): ErrorDetail[] {
  return result.success ? [] : result.error.issues.flatMap((i) => issueDetails(i, raw, SUBJECT));
}

/** The permissions of a body (undefined when absent), or every problem with them. */
function permissionsOf(
  raw: Record<string, unknown>,
): { ok: true; value: Permissions | undefined } | { ok: false; errors: ErrorDetail[] } {
  if (raw.permissions === undefined) return { ok: true, value: undefined };
  const check = validatePermissions(raw.permissions);
  if (check.ok) return { ok: true, value: check.permissions };
  return {
    ok: false,
    errors: check.problems.map((p) => ({
      code: 'INVALID_FIELD',
      field: p.field,
      message: `${p.message}.`,
    })),
  };
}

function toDate(value: string | null | undefined): Date | null | undefined {
  return typeof value === 'string' ? new Date(value) : value;
}

function toRateLimit(
  value: { requests: number; per_seconds: number } | null | undefined,
): RateLimit | null | undefined {
  return value ? { requests: value.requests, perSeconds: value.per_seconds } : value;
}

export interface CreateApiClientInput {
  name: string;
  isAdmin: boolean;
  generateApiKey: boolean;
  apiClientId: string | null;
  expiresAt: Date | null;
  rateLimit: RateLimit | null;
  permissions: Permissions;
}

/** The fields a PUT changes; absent ones keep their values. */
export interface UpdateApiClientInput {
  name?: string;
  isAdmin?: boolean;
  /** null removes it (allowed only for a client that has an API key). */
  apiClientId?: string | null;
  /** null: never expires. */
  expiresAt?: Date | null;
  /** null: no limit. */
  rateLimit?: RateLimit | null;
  /** null: may call everything. */
  permissions?: Permissions;
}

/** Validates a creation body at `now` (ms), reporting every problem at once. */
export function parseCreateApiClient(
  body: unknown,
  now: number = Date.now(),
): Validated<CreateApiClientInput> {
  if (!isJsonObject(body)) return NOT_AN_OBJECT;
  const result = createApiClientSchema.safeParse(forSchema(body));
  const raw = body as Record<string, unknown>;
  const errors = schemaErrors(result, raw);
  const rules = permissionsOf(raw);
  if (!rules.ok) errors.push(...rules.errors);
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
  if (!result.success || !rules.ok || errors.length > 0) return { ok: false, errors };
  const v = result.data;
  return {
    ok: true,
    value: {
      name: v.name,
      isAdmin: v.is_admin,
      generateApiKey: v.generate_api_key,
      apiClientId: v.api_client_id ?? null,
      expiresAt: toDate(v.expires_at) ?? null,
      rateLimit: toRateLimit(v.rate_limit) ?? null,
      permissions: rules.value ?? null,
    },
  };
}

/**
 * Validates an update body (PUT) at `now` (ms): any of name, is_admin, api_client_id,
 * expires_at, rate_limit, permissions; every problem at once.
 */
export function parseUpdateApiClient(
  body: unknown,
  now: number = Date.now(),
): Validated<UpdateApiClientInput> {
  if (!isJsonObject(body)) return NOT_AN_OBJECT;
  const result = updateApiClientSchema.safeParse(forSchema(body));
  const raw = body as Record<string, unknown>;
  const errors = schemaErrors(result, raw);
  const rules = permissionsOf(raw);
  if (!rules.ok) errors.push(...rules.errors);
  errors.push(...expiryInThePast(raw, now));
  if (!result.success || !rules.ok || errors.length > 0) return { ok: false, errors };
  const v = result.data;
  if (
    v.name === undefined &&
    v.is_admin === undefined &&
    v.api_client_id === undefined &&
    v.expires_at === undefined &&
    v.rate_limit === undefined &&
    rules.value === undefined
  ) {
    return {
      ok: false,
      errors: [
        {
          code: 'INVALID_BODY',
          message:
            'Send at least one of name, is_admin, api_client_id, expires_at, rate_limit, permissions.',
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
      ...(v.rate_limit !== undefined ? { rateLimit: toRateLimit(v.rate_limit) } : {}),
      ...(rules.value !== undefined ? { permissions: rules.value } : {}),
    },
  };
}
