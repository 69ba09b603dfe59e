import { z } from 'zod';
import type { Operation } from '../http/operation.js';
import { AUDIT_ACTIONS } from './audit-log.js';
import { auditQuerySchema, failureQuerySchema } from './audit-query.js';

export const AUDIT_EVENTS_PATH = '/v1/management/audit-events';
export const AUTH_FAILURES_PATH = '/v1/management/auth-failures';
const TAG = 'Audit';
const clientId = z.int().min(1).max(Number.MAX_SAFE_INTEGER);
const nextCursor = z.strictObject({
  next_cursor: z.string().nullable().meta({ description: "The next page's `cursor`, or null." }),
});

/** One audit event as listed (audit-reader.ts); never a secret. */
export const auditEventSchema = z
  .strictObject({
    id: clientId.meta({ description: 'Increasing with time.' }),
    time: z.iso.datetime().meta({ description: 'When the change committed (UTC).' }),
    action: z.enum(AUDIT_ACTIONS),
    outcome: z.enum(['success', 'failure']),
    actor: z.strictObject({
      api_key_id: clientId.nullable().meta({ description: 'The admin client; null: bootstrap.' }),
      name: z.string().nullable(),
      auth_method: z.enum(['api_key', 'bearer', 'bootstrap']),
    }),
    target_id: clientId.nullable().meta({ description: 'The API client changed, if any.' }),
    target_name: z.string().nullable().meta({
      description:
        "The target's name when the event was recorded (a deleted client's too); null: no target, no such client, or an event recorded before names were kept.",
    }),
    request_id: z.string().nullable().meta({ description: "nginx's X-Request-Id." }),
    source_address: z.string().nullable().meta({ description: "The caller's IP address." }),
    details: z
      .record(z.string(), z.unknown())
      .meta({ description: 'What changed (names, flags, times); never a secret.' }),
  })
  .meta({ id: 'AuditEvent', description: 'One management action, as recorded.' });

/** One count of refused authentications. */
export const authFailureSchema = z
  .strictObject({
    api_key_id: clientId
      .nullable()
      .meta({ description: 'The client the credential named; null: none.' }),
    reason: z.string().meta({
      description:
        'The refusal code, e.g. `INVALID_API_KEY` (`TOO_MANY_FAILED_ATTEMPTS`: answered 429 past a failure budget).',
    }),
    window_start: z.iso.datetime().meta({ description: 'The minute counted (UTC).' }),
    count: z.int().min(1).meta({ description: 'Refusals in that minute.' }),
  })
  .meta({ id: 'AuthFailure', description: 'Refused authentications per client, reason, minute.' });

/** The audit routes (audit-routes.ts mounts its handlers on these). */
export const AUDIT_OPERATIONS = {
  events: {
    method: 'get',
    path: AUDIT_EVENTS_PATH,
    operationId: 'listAuditEvents',
    tag: TAG,
    summary: 'List audit events',
    description: 'Newest first, keyset-paged by `limit` and `cursor`; the filters combine.',
    query: auditQuerySchema,
    success: {
      200: {
        description: 'The events.',
        schema: z
          .strictObject({ items: z.array(auditEventSchema), response_metadata: nextCursor })
          .meta({ id: 'AuditEventList', description: 'A page of audit events.' }),
      },
    },
    errors: [400],
  },
  failures: {
    method: 'get',
    path: AUTH_FAILURES_PATH,
    operationId: 'listAuthFailures',
    tag: TAG,
    summary: 'List failed-authentication counts',
    description: 'Newest minute first, keyset-paged by `limit` and `cursor`.',
    query: failureQuerySchema,
    success: {
      200: {
        description: 'The counts.',
        schema: z
          .strictObject({ items: z.array(authFailureSchema), response_metadata: nextCursor })
          .meta({ id: 'AuthFailureList', description: 'A page of failure counts.' }),
      },
    },
    errors: [400],
  },
} satisfies Record<string, Operation>;
