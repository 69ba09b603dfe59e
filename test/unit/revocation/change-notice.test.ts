import { describe, expect, test } from 'vitest';
import { parseChangeNotice } from '../../../sidecar/revocation/change-notice.js';

describe('parseChangeNotice', () => {
  test('a bare row id is a change (update or delete)', () => {
    expect(parseChangeNotice('42')).toEqual({ kind: 'changed', row: 42 });
  });

  test('created: and a row id is a new client', () => {
    expect(parseChangeNotice('created:42')).toEqual({ kind: 'created', row: 42 });
  });

  test.each([
    undefined,
    '',
    '0',
    '-1',
    '042',
    '4.2',
    ' 42',
    '42 ',
    'created:',
    'created:0',
    'created:x',
    'Created:42',
    'deleted:42',
    'created:created:42',
    '9007199254740993',
    '99999999999999999',
  ])('%j is no notice', (payload) => {
    expect(parseChangeNotice(payload)).toBeNull();
  });

  test('the largest safe integer is a row', () => {
    expect(parseChangeNotice(String(Number.MAX_SAFE_INTEGER))).toEqual({
      kind: 'changed',
      row: Number.MAX_SAFE_INTEGER,
    });
  });
});
