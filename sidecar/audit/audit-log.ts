import type { Queryable } from '../db/queryable.js';

/** Every action the audit trail records (docs/decisions/20261123-operations-api.md). */
export const AUDIT_ACTIONS = [
  'api_client.create',
  'api_client.update',
  'api_client.delete',
  'api_client.rotate',
  'bootstrap_key.issue',
  'bootstrap_key.refuse',
  'settings.update',
] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

export type AuditAuthMethod = 'api_key' | 'bearer' | 'bootstrap';

/** Who did it: the authenticated admin, or the bootstrap (no client: id and name null). */
export interface AuditActor {
  apiKeyId: number | null;
  name: string | null;
  authMethod: AuditAuthMethod;
}

/**
 * One event to record. `details` is free JSON about the change (names, flags, times): it must
 * never hold a secret, a key, a token or a hash.
 */
export interface AuditEventInput {
  action: AuditAction;
  outcome: 'success' | 'failure';
  actor: AuditActor;
  targetId: number | null;
  /**
   * The target's name when the change removed it (a delete). Otherwise left out: the event
   * takes the name `targetId` has in api_clients as it is written (after the change, in its
   * transaction; as it stands, for a refused one), so no caller reads the client for it.
   */
  targetName?: string;
  requestId: string | null;
  sourceAddress: string | null;
  details?: Record<string, unknown>;
}

/**
 * Appends an event on `db`: pass the transaction's connection to commit it with the change it
 * records, or the pool for a failure (which changed nothing). Database faults propagate.
 */
export async function recordAuditEvent(db: Queryable, event: AuditEventInput): Promise<void> {
  await db.query({
    name: 'audit_events_insert',
    text: `INSERT INTO audit_events (action, outcome, actor_id, actor_name, actor_auth_method,
             target_id, target_name, request_id, source_address, details)
           VALUES ($1, $2, $3, $4, $5, $6,
                   COALESCE($10::text, (SELECT name FROM api_clients WHERE id = $6)),
                   $7, $8, $9)`,
    values: [
      event.action,
      event.outcome,
      event.actor.apiKeyId,
      event.actor.name,
      event.actor.authMethod,
      event.targetId,
      event.requestId,
      event.sourceAddress,
      JSON.stringify(event.details ?? {}),
      event.targetName ?? null,
    ],
  });
}

/** The audit trail's write side: `AuditLog.record(db, event)`. */
export const AuditLog = { record: recordAuditEvent } as const;
