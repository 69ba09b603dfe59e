import { describe, expect, test } from 'vitest';
import { parseBeatNotice, parseChangeNotice } from '../../../sidecar/revocation/change-notice.js';

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

describe('parseBeatNotice', () => {
  test('a heartbeat names its sender, its number and the feed head', () => {
    expect(parseBeatNotice('beat:0123456789abcdef:7:9f3a:120')).toEqual({
      sender: '0123456789abcdef',
      n: 7,
      head: { epoch: '9f3a', position: 120 },
    });
  });

  test('a heartbeat is no change notice', () => {
    expect(parseChangeNotice('beat:0123456789abcdef:7:9f3a:120')).toBeNull();
  });

  test.each([
    undefined,
    '',
    'beat:',
    'beat:0123456789abcdef:7:9f3a',
    'beat:0123:7:9f3a:120',
    'beat:0123456789ABCDEF:7:9f3a:120',
    'beat:0123456789abcdef:07:9f3a:120',
    'beat:0123456789abcdef:7:9f3a:-1',
    'beat:0123456789abcdef:7:9f3a:99999999999999999',
    'Beat:0123456789abcdef:7:9f3a:120',
    '42',
  ])('%j is no heartbeat', (payload) => {
    expect(parseBeatNotice(payload)).toBeNull();
  });
});
