import type { z } from 'zod';
import type { Queryable } from '../db/queryable.js';
import type { AuditAction, AuditAuthMethod } from './audit-log.js';
import type { auditEventSchema, authFailureSchema } from './audit-operations.js';
import type { AuditQuery, FailureQuery } from './audit-query.js';

/** An audit event as the API shows it: the documented schema's type, never a second copy. */
export type AuditEventRecord = z.infer<typeof auditEventSchema>;

/** A count of refused authentications in one minute. */
export type AuthFailureRecord = z.infer<typeof authFailureSchema>;

interface AuditRow {
  id: number;
  time: Date;
  action: AuditAction;
  outcome: AuditEventRecord['outcome'];
  actor_id: number | null;
  actor_name: string | null;
  actor_auth_method: AuditAuthMethod;
  target_id: number | null;
  target_name: string | null;
  request_id: string | null;
  source_address: string | null;
  details: Record<string, unknown>;
}

/**
 * One page of events, newest (highest id) first, reading at most `limit + 1` rows: every
 * filter has an index on (filter, id) that serves this order, the time range one on (time, id).
 */
export async function readAuditEvents(
  db: Queryable,
  q: AuditQuery,
): Promise<{ items: AuditEventRecord[]; lastId: number | null; more: boolean }> {
  const where: string[] = [];
  const values: unknown[] = [];
  const add = (sql: string, value: unknown) => {
    values.push(value);
    where.push(sql.replace('?', `$${values.length}`));
  };
  if (q.beforeId !== null) add('id < ?', q.beforeId);
  if (q.action !== null) add('action = ?', q.action);
  if (q.actorId !== null) add('actor_id = ?', q.actorId);
  if (q.targetId !== null) add('target_id = ?', q.targetId);
  // The column keeps microseconds, the listing whole milliseconds: an event listed at `until`
  // may be up to 999 µs past it, so "at or before" is "before the next millisecond" (a plain
  // range still, which the time index serves). `since` is a whole millisecond: >= is exact.
  if (q.since !== null) add('time >= ?', q.since);
  if (q.until !== null) add('time < ?', new Date(q.until.getTime() + 1));
  values.push(q.limit + 1);
  const { rows } = await db.query<AuditRow>(
    `SELECT id, time, action, outcome, actor_id, actor_name, actor_auth_method, target_id,
            target_name, request_id, source_address, details
     FROM audit_events ${where.length > 0 ? `WHERE ${where.join(' AND ')}` : ''}
     ORDER BY id DESC LIMIT $${values.length}`,
    values,
  );
  const more = rows.length > q.limit;
  const page = more ? rows.slice(0, q.limit) : rows;
  return {
    items: page.map((r) => ({
      id: r.id,
      time: r.time.toISOString(),
      action: r.action,
      outcome: r.outcome,
      actor: { api_key_id: r.actor_id, name: r.actor_name, auth_method: r.actor_auth_method },
      target_id: r.target_id,
      target_name: r.target_name,
      request_id: r.request_id,
      source_address: r.source_address,
      details: r.details,
    })),
    lastId: page.at(-1)?.id ?? null,
    more,
  };
}

/** One page of failure counts, newest minute first (then newest row). */
export async function readAuthFailures(
  db: Queryable,
  q: FailureQuery,
): Promise<{ items: AuthFailureRecord[]; last: [number, number] | null; more: boolean }> {
  const values: unknown[] = [];
  let where = '';
  if (q.before) {
    values.push(new Date(q.before[0]), q.before[1]);
    where = 'WHERE (window_start, id) < ($1, $2)';
  }
  values.push(q.limit + 1);
  const { rows } = await db.query<{
    id: number;
    api_key_id: number | null;
    reason: string;
    window_start: Date;
    count: number;
  }>(
    `SELECT id, api_key_id, reason, window_start, count FROM auth_failures ${where}
     ORDER BY window_start DESC, id DESC LIMIT $${values.length}`,
    values,
  );
  const more = rows.length > q.limit;
  const page = more ? rows.slice(0, q.limit) : rows;
  const last = page.at(-1);
  return {
    items: page.map((r) => ({
      api_key_id: r.api_key_id,
      reason: r.reason,
      window_start: r.window_start.toISOString(),
      count: Number(r.count),
    })),
    last: last ? [last.window_start.getTime(), last.id] : null,
    more,
  };
}
