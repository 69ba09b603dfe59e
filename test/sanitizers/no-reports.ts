import { afterAll, expect } from 'vitest';
import { clearSanitizerReports, sanitizerReports } from './sanitized-nginx.js';

// After each file of the sanitizer suite (its nginx stopped by then: its afterAll ran first,
// hooks unwinding as a stack), no AddressSanitizer, LeakSanitizer or UndefinedBehaviorSanitizer
// report: any is that file's failure, quoted, and cleared so the next file starts clean.
afterAll(() => {
  const reports = sanitizerReports();
  clearSanitizerReports();
  expect(reports.map((r) => `${r.file}:\n${r.text.slice(0, 4000)}`)).toEqual([]);
});
