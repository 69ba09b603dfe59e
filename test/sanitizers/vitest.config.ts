import { defineConfig } from 'vitest/config';

// .ci/run sets CI_REPORT_DIR to add up every suite's results in its summary line.
const report = process.env.CI_REPORT_DIR;

/**
 * The sanitizer suite (docs/decisions/20261125-hit-in-c.md, "Fuzzed and sanitized"), part of
 * `npm test` after the main run, beside the container suite (scripts/test-suites.sh): the
 * module's libFuzzer targets for a bounded time each (fuzz.test.ts), and the module's end-to-end
 * and integration files again with the module built with AddressSanitizer and
 * UndefinedBehaviorSanitizer, loaded into Debian's nginx (global-setup.ts); any sanitizer
 * report fails the file (no-reports.ts). Alone:
 *   npx vitest run --config test/sanitizers/vitest.config.ts
 */
export default defineConfig({
  test: {
    root: new URL('../..', import.meta.url).pathname,
    include: [
      'test/sanitizers/**/*.test.ts',
      'test/e2e/hit-module.test.ts',
      'test/e2e/hit-module-contract.test.ts',
      'test/e2e/hostile-requests.test.ts',
      'test/integration/generator/nginx-module-hits.test.ts',
      // nginx's span records: the module's gateway_span_log (ngx_http_gateway_span_log_module.c).
      'test/integration/generator/nginx-trace-context.test.ts',
    ],
    globalSetup: [
      'test/support/fresh-dist.ts',
      'test/support/global-postgres.ts',
      'test/sanitizers/global-setup.ts',
    ],
    setupFiles: ['test/sanitizers/no-reports.ts'],
    pool: 'forks',
    // One file at a time: the reports are read after each, and the machine has 2 cores.
    maxWorkers: 1,
    minWorkers: 1,
    testTimeout: 60_000,
    hookTimeout: 240_000,
    reporters: report
      ? ['default', ['json', { outputFile: `${report}/sanitizers.json` }]]
      : ['default'],
  },
});
