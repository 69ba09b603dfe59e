import { describe, expect, test } from 'vitest';
import { parseUsageCounts } from '../../../sidecar/nginx/usage-counts.js';

// nginx's usage report (lua/gateway/usage.lua's drain): sections of a kind and a start, each
// followed by a batch's lines as a worker wrote them.
describe('parseUsageCounts', () => {
  test('sums a client over the batches of one stretch, allowed and limited apart', () => {
    const text =
      'u 1700000000\n12 3\n7 1\nu 1700000000\n12 2\nx 1700000000\n12 4\nu 1700000005\n12 1\n';
    expect(parseUsageCounts(text)).toEqual([
      { apiKeyId: 12, at: 1_700_000_000_000, allowed: 5, limited: 4 },
      { apiKeyId: 7, at: 1_700_000_000_000, allowed: 1, limited: 0 },
      { apiKeyId: 12, at: 1_700_000_005_000, allowed: 1, limited: 0 },
    ]);
  });

  test('leaves out what is no count: lines before a section, bad rows, bad numbers, zeros', () => {
    const text = [
      '12 3', // before any section
      'u 1700000000',
      '012 1',
      '12 -1',
      '12 1.5',
      '12 ',
      ' 3',
      '12 0',
      '9999999999999999999 1',
      'q 1700000000',
      '13 2', // still in the u section: an unknown section line is no section
      'u 0170',
      '14 1', // a malformed section header is ignored too: still the first section
      '',
    ].join('\n');
    expect(parseUsageCounts(text)).toEqual([
      { apiKeyId: 13, at: 1_700_000_000_000, allowed: 2, limited: 0 },
      { apiKeyId: 14, at: 1_700_000_000_000, allowed: 1, limited: 0 },
    ]);
  });

  test("an older nginx's JSON report is still read (an upgrade under way)", () => {
    expect(
      parseUsageCounts('{"1700000000|12":[3,1],"1700000000|7":[0,0],"bad":[1,1],"5|x":[1,2]}'),
    ).toEqual([{ apiKeyId: 12, at: 1_700_000_000_000, allowed: 3, limited: 1 }]);
    expect(parseUsageCounts('{not json')).toEqual([]);
  });

  test('nothing to report is no counts', () => {
    expect(parseUsageCounts('')).toEqual([]);
  });
});
