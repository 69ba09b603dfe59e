// Adds up the vitest JSON reports written under CI_REPORT_DIR and prints the CI summary line.
// A failing step that wrote no report (lint, typecheck, build) counts as one failure.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { stripVTControlCharacters } from 'node:util';

const [dir, statusText, startedText] = process.argv.slice(2);
const status = Number(statusText);
let passed = 0;
let failed = 0;
let skipped = 0;
// CI keeps only the tail of the output: the failures are named again here, just above the
// summary line, so a failure is never only a count.
const failures = [];
const firstLines = (messages) =>
  messages
    .join('\n')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .slice(0, 60)
    .map((line) => `    ${line.slice(0, 300)}`)
    .join('\n');
const reports = readdirSync(dir).filter((f) => f.endsWith('.json'));
for (const file of reports) {
  const report = JSON.parse(readFileSync(join(dir, file), 'utf8'));
  passed += report.numPassedTests;
  failed += report.numFailedTests;
  skipped += report.numPendingTests + (report.numTodoTests ?? 0);
  for (const result of report.testResults) {
    for (const test of result.assertionResults) {
      if (test.status === 'failed') {
        failures.push(`${result.name}\n  ${test.fullName}\n${firstLines(test.failureMessages)}`);
      }
    }
    // A file that failed to load (syntax error, failing beforeAll) has no failed tests to
    // count: it counts as one.
    if (result.status === 'failed' && result.assertionResults.length === 0) {
      failed += 1;
      failures.push(`${result.name} (did not load)\n${firstLines([result.message ?? ''])}`);
    }
  }
}
if (status !== 0 && failed === 0) failed = 1;
for (const failure of failures) console.log(`FAILED ${failure}`);
// A step that failed without naming a failing test (lint, typecheck, build, a suite that could
// not start; mutation testing below its threshold): the end of its own output, since no test
// report names it.
const tail = (log) => {
  const text = stripVTControlCharacters(readFileSync(join(dir, log), 'utf8'));
  return text.trimEnd().split('\n').slice(-30).join('\n');
};
if (existsSync(join(dir, 'npm-test.failed')) && failures.length === 0)
  console.log(
    `FAILED npm test, with no failing test named; its last lines:\n${tail('npm-test.log')}`,
  );
if (existsSync(join(dir, 'mutation.failed')))
  console.log(`FAILED npm run mutation; its last lines:\n${tail('mutation.log')}`);
const minutes = ((Date.now() / 1000 - Number(startedText)) / 60).toFixed(1);
console.log(`suites: ${reports.length} reports; skipped: ${skipped}; CI run: ${minutes} min`);
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed > 0 || status !== 0 ? 1 : 0);
