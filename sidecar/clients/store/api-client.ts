import { z } from 'zod';
import { ALLOWED_METHODS } from '../../../common/contract.js';
import { MAX_PATTERN_BYTES, MAX_RULES, type Permissions } from '../../../common/permissions.js';

/** A client's name and api_client_id, as DCT allows: both texts up to 1024 characters. */
export const MAX_TEXT = 1024;

/** A client's rate limit: at most `requests` per `perSeconds`, counted by each nginx. */
export interface RateLimit {
  requests: number;
  perSeconds: number;
}

/** The bounds nginx enforces (lua/gateway/ratelimit.lua parses no more) and the table checks. */
export const RATE_LIMIT_BOUNDS = {
  requests: { min: 1, max: 1_000_000_000 },
  perSeconds: { min: 1, max: 86_400 },
} as const;

/** A rate limit in the API's words: `{"requests": 100, "per_seconds": 1}`. */
export const rateLimitSchema = z
  .strictObject({
    requests: z
      .int({ error: 'must be a whole number' })
      .min(RATE_LIMIT_BOUNDS.requests.min)
      .max(RATE_LIMIT_BOUNDS.requests.max)
      .meta({ description: 'How many requests the window allows.' }),
    per_seconds: z
      .int({ error: 'must be a whole number' })
      .min(RATE_LIMIT_BOUNDS.perSeconds.min)
      .max(RATE_LIMIT_BOUNDS.perSeconds.max)
      .meta({ description: 'The window, in seconds (1 to 86400).' }),
  })
  .meta({
    id: 'RateLimit',
    description:
      'At most `requests` per `per_seconds` (a sliding window), counted by each gateway pair ' +
      'on its own; past it, 429 `RATE_LIMITED` with `Retry-After`.',
  });

/**
 * What a client may call, in the API's words (docs/decisions/20261128-permissions.md). The
 * schema describes the field in the OpenAPI document; the checks are validatePermissions'
 * (common/permissions.ts), whose problems name the rule.
 */
export const permissionRuleSchema = z
  .strictObject({
    methods: z
      .array(z.enum(ALLOWED_METHODS as [string, ...string[]]))
      .min(1)
      .max(ALLOWED_METHODS.length)
      .meta({ description: 'The methods this rule allows, each once; HEAD is allowed with GET.' }),
    path: z
      .string()
      .min(1)
      .max(MAX_PATTERN_BYTES)
      .meta({
        description:
          'An absolute path pattern: `*` is exactly one segment, a final `/**` zero or more ' +
          'segments below; no other wildcard, no `.`, `..` or empty segment, no `%`, `;`, `?`, ' +
          `\`#\`, space or backslash; at most ${MAX_PATTERN_BYTES} bytes of UTF-8.`,
      }),
  })
  .meta({ id: 'PermissionRule', description: 'These methods on the paths the pattern matches.' });

export const permissionsSchema = z
  .array(permissionRuleSchema)
  .max(MAX_RULES)
  .nullable()
  .meta({
    description:
      `null: the client may call everything. A list of at most ${MAX_RULES} rules: only a ` +
      'request whose method and path some rule allows passes; any other is 403 ' +
      '`PERMISSION_DENIED`, and for such a client a path that could reach the application as ' +
      'another path is 400 `AMBIGUOUS_PATH`.',
  });

/** An API client as stored; `keyHash` and `previousKeyHash` never leave the sidecar. */
export interface ApiClientRow {
  id: number;
  name: string;
  isAdmin: boolean;
  apiClientId: string | null;
  keyHash: Buffer | null;
  createdAt: Date;
  /** From then on the client is refused (API_CLIENT_EXPIRED); null: never. */
  expiresAt: Date | null;
  /** When the client last authenticated, to the minute (written at most once a minute). */
  lastUsedAt: Date | null;
  /** The secret replaced by the last rotation, accepted until `previousKeyExpiresAt`. */
  previousKeyHash: Buffer | null;
  previousKeyExpiresAt: Date | null;
  /** null: not limited. */
  rateLimit: RateLimit | null;
  /** null: may call everything; a list: only what a rule allows. */
  permissions: Permissions;
}

const clientId = z.int().min(1).max(Number.MAX_SAFE_INTEGER);

/**
 * The public record returned by the management routes: never a secret or a hash. `id` is what
 * DCT's SDKs read; `api_key_id`, the seed's name for the same number, stays. The schema is the
 * record's type and its description in the OpenAPI document.
 */
export const apiClientRecordSchema = z
  .strictObject({
    id: clientId.meta({ description: 'The client id (the `<id>` of its API key).' }),
    api_key_id: clientId.meta({ description: "The same number as `id` (the seed's name)." }),
    name: z.string().meta({ description: 'Unique name.' }),
    is_admin: z.boolean().meta({ description: 'May use the management API.' }),
    api_client_id: z
      .string()
      .nullable()
      .meta({ description: 'The OIDC subject (claim value) of this client, if any.' }),
    has_api_key: z.boolean().meta({ description: 'Whether the client has an API key.' }),
    created_at: z.iso.datetime().meta({ description: 'When the client was created (UTC).' }),
    expires_at: z.iso.datetime().nullable().meta({
      description: 'From then on the client is refused (`API_CLIENT_EXPIRED`); null: never.',
    }),
    last_used_at: z.iso.datetime().nullable().meta({
      description: 'When the client last authenticated (written at most once a minute).',
    }),
    previous_key_expires_at: z.iso.datetime().nullable().meta({
      description: 'Set while a rotated-out secret is still accepted, else null.',
    }),
    rate_limit: rateLimitSchema.nullable().meta({ description: 'null: not limited.' }),
    permissions: permissionsSchema,
  })
  .meta({ id: 'ApiClient', description: 'An API client; never a secret or a hash.' });

export type ApiClientRecord = z.infer<typeof apiClientRecordSchema>;

/** The record of `row` as seen at `now` (ms): a grace period that has ended shows as null. */
export function toRecord(row: ApiClientRow, now: number = Date.now()): ApiClientRecord {
  const grace = row.previousKeyExpiresAt;
  return {
    id: row.id,
    api_key_id: row.id,
    name: row.name,
    is_admin: row.isAdmin,
    api_client_id: row.apiClientId,
    has_api_key: row.keyHash !== null,
    created_at: row.createdAt.toISOString(),
    expires_at: row.expiresAt?.toISOString() ?? null,
    last_used_at: row.lastUsedAt?.toISOString() ?? null,
    previous_key_expires_at:
      grace !== null && row.previousKeyHash !== null && grace.getTime() > now
        ? grace.toISOString()
        : null,
    rate_limit: rateLimitJson(row.rateLimit),
    permissions: row.permissions,
  };
}

/** The limit as the API writes it. */
export function rateLimitJson(limit: RateLimit | null): ApiClientRecord['rate_limit'] {
  return limit ? { requests: limit.requests, per_seconds: limit.perSeconds } : null;
}

/** Whether the client has expired at `now` (ms): from `expires_at` on, inclusive. */
export function isExpired(row: Pick<ApiClientRow, 'expiresAt'>, now: number): boolean {
  return row.expiresAt !== null && row.expiresAt.getTime() <= now;
}

/**
 * Who a request comes from, as passed upstream. For an API key `clientId` is the numeric id
 * and `clientName` the client's name; for a bearer token both come from the configured
 * claims (spec 5.3.4), and `id` is the matching API client's numeric id.
 */
export interface Identity {
  id: number;
  clientId: string;
  clientName: string;
  isAdmin: boolean;
  /** The client's rate limit, enforced by nginx; absent or null: none. */
  rateLimit?: RateLimit | null;
  /** What the client may call, enforced by nginx; absent or null: everything. */
  permissions?: Permissions;
}
