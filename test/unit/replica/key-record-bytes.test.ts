import { describe, expect, test } from 'vitest';
import { KEY_RECORD } from '../../../common/contract.js';
import { applyBody, parseKeyTableState } from '../../../sidecar/nginx/key-table.js';
import { formatPosition, parsePosition } from '../../../sidecar/replica/change-feed.js';
import { type KeyTableRow, keyRecordBytes } from '../../../sidecar/replica/key-record-bytes.js';

// The writer of the key table's records; test/lua/cases/key_table.lua reads the same bytes.
const H1 = Buffer.alloc(32, 1);
const H2 = Buffer.alloc(32, 2);
const plain: KeyTableRow = {
  id: 7,
  name: 'n',
  isAdmin: false,
  keyHash: H1,
  expiresAt: null,
  previousKeyHash: null,
  previousKeyExpiresAt: null,
  rateLimit: null,
  permissions: null,
};
const len = (text: string) => Buffer.concat([Buffer.from([text.length]), Buffer.from(text)]);

describe('keyRecordBytes', () => {
  test('a plain client: the format, its flags, its hash and its name', () => {
    expect(keyRecordBytes(plain)).toEqual(
      Buffer.concat([
        Buffer.from([KEY_RECORD.version, KEY_RECORD.flags.key]),
        H1,
        Buffer.from('n'),
      ]),
    );
  });

  test('every field, in the order the readers expect (the Lua case builds the same bytes)', () => {
    const bytes = keyRecordBytes({
      ...plain,
      name: 'Ada L',
      isAdmin: true,
      previousKeyHash: H2,
      previousKeyExpiresAt: new Date(1_700_000_100_250),
      expiresAt: new Date(1_800_000_000_000),
      rateLimit: { requests: 100, perSeconds: 60 },
    });
    expect(bytes).toEqual(
      Buffer.concat([
        Buffer.from([1, 31]),
        H1,
        H2,
        len('1700000100.250'),
        len('1800000000.000'),
        len('100 60'),
        Buffer.from('Ada%20L'),
      ]),
    );
  });

  test('permissions: the rules flag, their length as text, their text, before the name', () => {
    const text = '2 03/r/** 04/%C3%A9/*';
    const bytes = keyRecordBytes({
      ...plain,
      rateLimit: { requests: 5, perSeconds: 1 },
      permissions: [
        { methods: ['GET'], path: '/r/**' },
        { methods: ['POST'], path: '/é/*' },
      ],
    });
    expect(bytes).toEqual(
      Buffer.concat([
        Buffer.from([1, KEY_RECORD.flags.key | KEY_RECORD.flags.limit | KEY_RECORD.flags.rules]),
        H1,
        len('5 1'),
        len(String(text.length)),
        Buffer.from(text),
        Buffer.from('n'),
      ]),
    );
    // No rule at all is a rule set too: nothing allowed, never "everything".
    expect(keyRecordBytes({ ...plain, permissions: [] })).toEqual(
      Buffer.concat([
        Buffer.from([1, KEY_RECORD.flags.key | KEY_RECORD.flags.rules]),
        H1,
        len('1'),
        Buffer.from('0'),
        Buffer.from('n'),
      ]),
    );
  });

  test('a rotated-out hash without its grace end is not written; no key is no hash', () => {
    const bytes = keyRecordBytes({ ...plain, keyHash: null, previousKeyHash: H2 });
    expect(bytes).toEqual(Buffer.from([1, 0, 0x6e]));
  });

  test('a typical client fits the 128-byte slab with its key id (68 bytes of node header)', () => {
    const bytes = keyRecordBytes({ ...plain, id: 1_000_000, name: 'reporting-job-17' });
    expect(68 + String(1_000_000).length + bytes.length).toBeLessThanOrEqual(128);
  });
});

describe('the key table on the control socket', () => {
  test('an apply body is one line per change, a deletion an id alone', () => {
    expect(
      applyBody([
        { id: 3, record: Buffer.from([1, 0, 0x6e]) },
        { id: 4, record: null },
      ]),
    ).toBe('3 AQBu\n4\n');
  });

  test("nginx's state, read strictly", () => {
    expect(
      parseKeyTableState({
        phase: 'complete',
        position: 'ab:3',
        records: 2,
        full: true,
        trusted_until: 5,
      }),
    ).toMatchObject({
      phase: 'complete',
      position: 'ab:3',
      records: 2,
      full: true,
      trustedUntil: 5,
    });
    expect(parseKeyTableState({ phase: 'other' })?.phase).toBeNull();
    expect(parseKeyTableState([])).toBeNull();
  });

  test('a position is an epoch and a number, nothing else', () => {
    expect(parsePosition('0af:12')).toEqual({ epoch: '0af', position: 12 });
    expect(formatPosition({ epoch: '0af', position: 12 })).toBe('0af:12');
    for (const bad of ['0af', ':1', 'xyz:1', '0af:01', '0af:-1', 12, null]) {
      expect(parsePosition(bad)).toBeNull();
    }
  });
});
