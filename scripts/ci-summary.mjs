// Adds up the vitest JSON reports written under CI_REPORT_DIR and prints the CI summary line.
// A failing step that wrote no report (lint, typecheck, build) counts as one failure.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const [dir, statusText, startedText] = process.argv.slice(2);
const status = Number(statusText);
let passed = 0;
let failed = 0;
let skipped = 0;
const reports = readdirSync(dir).filter((f) => f.endsWith('.json'));
for (const file of reports) {
  const report = JSON.parse(readFileSync(join(dir, file), 'utf8'));
  passed += report.numPassedTests;
  failed += report.numFailedTests;
  skipped += report.numPendingTests + (report.numTodoTests ?? 0);
  // A file that failed to load (syntax error, failing beforeAll) has no failed tests to count.
  failed += report.testResults.filter(
    (r) => r.status === 'failed' && r.assertionResults.length === 0,
  ).length;
}
if (status !== 0 && failed === 0) failed = 1;
const minutes = ((Date.now() / 1000 - Number(startedText)) / 60).toFixed(1);
console.log(`suites: ${reports.length} reports; skipped: ${skipped}; CI run: ${minutes} min`);
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed > 0 || status !== 0 ? 1 : 0);
