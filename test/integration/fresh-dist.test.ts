import { utimesSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { staleSources } from '../support/fresh-dist.js';

const ROOT = join(import.meta.dirname, '../..');

// The global setup has run before this file, so dist/ matches the sources now.
test('after the global setup no compiled source is newer than its dist/ file', () => {
  expect(staleSources()).toEqual([]);
});

// Detection only: rebuilding here would rewrite dist/ under suites running beside this one.
test('a dist/ file older than its source is stale', () => {
  const built = join(ROOT, 'dist/sidecar/keys/api-key.js');
  utimesSync(built, new Date(1_000_000), new Date(1_000_000));
  try {
    expect(staleSources()).toEqual(['sidecar/keys/api-key.ts']);
  } finally {
    utimesSync(built, new Date(), new Date());
  }
  expect(staleSources()).toEqual([]);
});
