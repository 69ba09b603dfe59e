import { describe, expect, test } from 'vitest';
import {
  AUDIT_CURSOR,
  FAILURE_CURSOR,
  parseAuditQuery,
  parseFailureQuery,
} from '../../../sidecar/audit/audit-query.js';
import { encodePosition } from '../../../sidecar/audit/position-cursor.js';
import type { Validated } from '../../../sidecar/http/body-errors.js';

const fields = (result: Validated<unknown>) =>
  result.ok ? [] : result.errors.map((e) => [e.code, e.field]);

describe('parseAuditQuery (read against the documented schema)', () => {
  test('nothing given: the defaults', () => {
    expect(parseAuditQuery({})).toEqual({
      ok: true,
      value: {
        limit: 100,
        beforeId: null,
        action: null,
        actorId: null,
        targetId: null,
        since: null,
        until: null,
      },
    });
  });

  test('every parameter, typed', () => {
    const cursor = encodePosition(AUDIT_CURSOR, [42]);
    expect(
      parseAuditQuery({
        limit: '1000',
        cursor,
        action: 'settings.update',
        actor: '7',
        target: '9',
        since: '2026-01-01T00:00:00+02:00',
        until: '2026-01-02T00:00:00.5Z',
      }),
    ).toEqual({
      ok: true,
      value: {
        limit: 1000,
        beforeId: 42,
        action: 'settings.update',
        actorId: 7,
        targetId: 9,
        since: new Date('2025-12-31T22:00:00Z'),
        until: new Date('2026-01-02T00:00:00.500Z'),
      },
    });
  });

  // Events are listed in whole milliseconds: finer digits can never be met by a listed time.
  test.each([
    ['2026-01-01T00:00:00.123Z', '2026-01-01T00:00:00.123Z', '2026-01-01T00:00:00.123Z'],
    ['2026-01-01T00:00:00.1230000Z', '2026-01-01T00:00:00.123Z', '2026-01-01T00:00:00.123Z'],
    ['2026-01-01T00:00:00.1230001Z', '2026-01-01T00:00:00.124Z', '2026-01-01T00:00:00.123Z'],
    ['2026-01-01T00:00:00.999999+02:00', '2025-12-31T22:00:01.000Z', '2025-12-31T22:00:00.999Z'],
    ['2026-01-01T00:00:00Z', '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z'],
    ['2026-01-01T00:00:00.5Z', '2026-01-01T00:00:00.500Z', '2026-01-01T00:00:00.500Z'],
  ])('%s: since rounds up to %s, until down to %s', (time, since, until) => {
    const parsed = parseAuditQuery({ since: time, until: time });
    expect(parsed.ok && parsed.value.since?.toISOString()).toBe(since);
    expect(parsed.ok && parsed.value.until?.toISOString()).toBe(until);
  });

  test.each([
    ['limit', '0'],
    ['limit', '1001'],
    ['limit', '01'],
    ['limit', '1.5'],
    ['limit', ''],
    ['actor', '0'],
    ['target', '-3'],
    ['action', 'api_client.read'],
    ['since', '2026-01-01T00:00:00'],
    ['until', '2026-02-30T00:00:00Z'],
    ['cursor', 'zz'],
    ['cursor', encodePosition(FAILURE_CURSOR, [1, 2])],
  ])('%s=%j is INVALID_FIELD, named', (field, value) => {
    const result = parseAuditQuery({ [field]: value });
    expect(fields(result)).toEqual([['INVALID_FIELD', field]]);
    expect(result.ok ? '' : result.errors[0]!.message).toMatch(new RegExp(`^${field} `));
  });

  test('a repeated parameter, an unknown one and a bad one: all at once', () => {
    const result = parseAuditQuery({ limit: ['1', '2'], color: 'red', since: 'yesterday' });
    expect(fields(result)).toEqual([
      ['INVALID_FIELD', 'limit'],
      ['UNKNOWN_FIELD', 'color'],
      ['INVALID_FIELD', 'since'],
    ]);
    expect(result.ok ? [] : result.errors.map((e) => e.message)).toEqual([
      'limit must be given once.',
      'color is not a query parameter.',
      'since must be an RFC 3339 time with an offset.',
    ]);
  });
});

describe('parseFailureQuery', () => {
  test('limit and its own cursor', () => {
    const cursor = encodePosition(FAILURE_CURSOR, [1_700_000_000_000, 5]);
    expect(parseFailureQuery({ limit: '3', cursor })).toEqual({
      ok: true,
      value: { limit: 3, before: [1_700_000_000_000, 5] },
    });
    expect(parseFailureQuery({})).toEqual({ ok: true, value: { limit: 100, before: null } });
  });

  test('the audit trail’s cursor, a filter it does not take and a bad limit are refused', () => {
    const result = parseFailureQuery({
      cursor: encodePosition(AUDIT_CURSOR, [1]),
      action: 'settings.update',
      limit: '0',
    });
    expect(fields(result).sort()).toEqual([
      ['INVALID_FIELD', 'cursor'],
      ['INVALID_FIELD', 'limit'],
      ['UNKNOWN_FIELD', 'action'],
    ]);
  });
});
