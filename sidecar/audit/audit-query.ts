import { z } from 'zod';
import type { Validated } from '../http/body-errors.js';
import { readQuery } from '../http/query-params.js';
import { AUDIT_ACTIONS, type AuditAction } from './audit-log.js';
import { decodePosition } from './position-cursor.js';

/** `GET /v1/management/audit-events`: one page, newest first, with its filters. */
export interface AuditQuery {
  limit: number;
  /** Events with a smaller id than this (the last of the previous page). */
  beforeId: number | null;
  action: AuditAction | null;
  actorId: number | null;
  targetId: number | null;
  /** Events listed at or after this whole millisecond. */
  since: Date | null;
  /** Events listed at or before this whole millisecond. */
  until: Date | null;
}

/** `GET /v1/management/auth-failures`: one page, newest window first. */
export interface FailureQuery {
  limit: number;
  /** [window start (ms), id] of the last row of the previous page. */
  before: [number, number] | null;
}

export const AUDIT_CURSOR = 'audit';
export const FAILURE_CURSOR = 'failures';
const DEFAULT_LIMIT = 100;

const limit = z
  .int()
  .min(1)
  .max(1000)
  .optional()
  .meta({ description: `Page size, 1 to 1000 (default ${DEFAULT_LIMIT}).` });
const cursor = z
  .string()
  .optional()
  .meta({ description: 'Opaque: `next_cursor` of the previous page.' });
const clientId = z.int().min(1).max(Number.MAX_SAFE_INTEGER).optional();
const time = z.iso.datetime({ offset: true }).optional();

/** The audit trail's query parameters: validation and the document read this one schema. */
export const auditQuerySchema = z.strictObject({
  limit,
  cursor,
  action: z.enum(AUDIT_ACTIONS).optional().meta({ description: 'Only events of this action.' }),
  actor: clientId.meta({ description: 'Only events done by this API client (its id).' }),
  target: clientId.meta({ description: 'Only events about this API client (its id).' }),
  since: time.meta({
    description:
      'Only events at or after this RFC 3339 time, to the millisecond events are listed in.',
  }),
  until: time.meta({
    description:
      'Only events at or before this RFC 3339 time, to the millisecond events are listed in.',
  }),
});

/** The failure counts' query parameters. */
export const failureQuerySchema = z.strictObject({ limit, cursor });

const LIMIT = 'limit must be an integer from 1 to 1000.';
const CURSOR = 'cursor is not valid.';
const TIME = 'must be an RFC 3339 time with an offset.';
const ID = 'must be an API client id (a positive integer).';

/** `limit` (1..1000, default 100), `cursor`, `action`, `actor`, `target`, `since`, `until`. */
export function parseAuditQuery(query: Record<string, unknown>): Validated<AuditQuery> {
  const read = readQuery(auditQuerySchema, query, {
    limit: LIMIT,
    cursor: CURSOR,
    action: `action must be one of ${AUDIT_ACTIONS.join(', ')}.`,
    actor: `actor ${ID}`,
    target: `target ${ID}`,
    since: `since ${TIME}`,
    until: `until ${TIME}`,
  });
  const position = positionOf(query, AUDIT_CURSOR, 1);
  if (!read.ok || position === false) return failed(read, position);
  const v = read.value;
  return {
    ok: true,
    value: {
      limit: v.limit ?? DEFAULT_LIMIT,
      beforeId: position?.[0] ?? null,
      action: v.action ?? null,
      actorId: v.actor ?? null,
      targetId: v.target ?? null,
      since: v.since !== undefined ? listedBound(v.since, 'up') : null,
      until: v.until !== undefined ? listedBound(v.until, 'down') : null,
    },
  };
}

/**
 * A time bound as a listed time can meet it: events are listed in whole milliseconds, so
 * digits past them round `since` up (a time listed before the bound is not at or after it)
 * and `until` down (`Date` drops them).
 */
function listedBound(time: string, round: 'up' | 'down'): Date {
  const date = new Date(time);
  const finer = /\.\d{3}\d*[1-9]/.test(time);
  return round === 'up' && finer ? new Date(date.getTime() + 1) : date;
}

/** `limit` (1..1000, default 100) and `cursor`. */
export function parseFailureQuery(query: Record<string, unknown>): Validated<FailureQuery> {
  const read = readQuery(failureQuerySchema, query, { limit: LIMIT, cursor: CURSOR });
  const position = positionOf(query, FAILURE_CURSOR, 2);
  if (!read.ok || position === false) return failed(read, position);
  return {
    ok: true,
    value: {
      limit: read.value.limit ?? DEFAULT_LIMIT,
      before: position ? [position[0]!, position[1]!] : null,
    },
  };
}

/**
 * The position a cursor of `kind` names: null without a cursor, false for one that is not
 * valid (a text that is no cursor of this listing; a repeated one readQuery reports).
 */
function positionOf(query: Record<string, unknown>, kind: string, length: number) {
  const text = query.cursor;
  if (typeof text !== 'string') return null;
  return decodePosition(text, kind, length) ?? false;
}

/** Every problem: the schema's, and a cursor that is text but names no position. */
function failed<T>(read: Validated<unknown>, position: number[] | null | false): Validated<T> {
  const errors = read.ok ? [] : [...read.errors];
  if (position === false) errors.push({ code: 'INVALID_FIELD', field: 'cursor', message: CURSOR });
  return { ok: false, errors };
}
