import type { ErrorDetail } from '../errors/api-error.js';
import type { Validated } from '../management/body-errors.js';
import { parseId } from '../management/numeric-id.js';
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
  since: Date | null;
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

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/i;

/** Reads the query text by text; every problem is reported at once. */
class QueryReader {
  readonly errors: ErrorDetail[] = [];

  constructor(
    private readonly query: Record<string, unknown>,
    known: readonly string[],
  ) {
    for (const key of Object.keys(query)) {
      if (!known.includes(key)) this.fail(key, `${key} is not a query parameter.`, 'UNKNOWN_FIELD');
    }
  }

  fail(field: string, message: string, code = 'INVALID_FIELD'): void {
    this.errors.push({ code, field, message });
  }

  /** The text of `field`, undefined when absent, null (reported) when not one text. */
  text(field: string): string | undefined | null {
    const value = this.query[field];
    if (value === undefined) return undefined;
    if (typeof value === 'string') return value;
    this.fail(field, `${field} must be given once.`);
    return null;
  }

  limit(): number {
    const text = this.text('limit');
    if (text === undefined || text === null) return 100;
    const n = parseId(text);
    if (n !== null && n <= 1000) return n;
    this.fail('limit', 'limit must be an integer from 1 to 1000.');
    return 100;
  }

  id(field: string): number | null {
    const text = this.text(field);
    if (text === undefined || text === null) return null;
    const id = parseId(text);
    if (id === null) this.fail(field, `${field} must be an API client id (a positive integer).`);
    return id;
  }

  time(field: string): Date | null {
    const text = this.text(field);
    if (text === undefined || text === null) return null;
    const ms = RFC3339.test(text) ? Date.parse(text) : Number.NaN;
    if (Number.isNaN(ms)) {
      this.fail(field, `${field} must be an RFC 3339 time with an offset.`);
      return null;
    }
    return new Date(ms);
  }

  cursor(kind: string, length: number): number[] | null {
    const text = this.text('cursor');
    if (text === undefined || text === null) return null;
    const position = decodePosition(text, kind, length);
    if (position === null) this.fail('cursor', 'cursor is not valid.');
    return position;
  }
}

/** `limit` (1..1000, default 100), `cursor`, `action`, `actor`, `target`, `since`, `until`. */
export function parseAuditQuery(query: Record<string, unknown>): Validated<AuditQuery> {
  const r = new QueryReader(query, [
    'limit',
    'cursor',
    'action',
    'actor',
    'target',
    'since',
    'until',
  ]);
  const limit = r.limit();
  const cursor = r.cursor(AUDIT_CURSOR, 1);
  const actionText = r.text('action');
  let action: AuditAction | null = null;
  if (typeof actionText === 'string') {
    if ((AUDIT_ACTIONS as readonly string[]).includes(actionText)) {
      action = actionText as AuditAction;
    } else r.fail('action', `action must be one of ${AUDIT_ACTIONS.join(', ')}.`);
  }
  const value: AuditQuery = {
    limit,
    beforeId: cursor?.[0] ?? null,
    action,
    actorId: r.id('actor'),
    targetId: r.id('target'),
    since: r.time('since'),
    until: r.time('until'),
  };
  if (r.errors.length > 0) return { ok: false, errors: r.errors };
  return { ok: true, value };
}

/** `limit` (1..1000, default 100) and `cursor`. */
export function parseFailureQuery(query: Record<string, unknown>): Validated<FailureQuery> {
  const r = new QueryReader(query, ['limit', 'cursor']);
  const limit = r.limit();
  const cursor = r.cursor(FAILURE_CURSOR, 2);
  if (r.errors.length > 0) return { ok: false, errors: r.errors };
  return { ok: true, value: { limit, before: cursor ? [cursor[0]!, cursor[1]!] : null } };
}
