import { configDefaults, defineConfig } from 'vitest/config';
import { suitesFirst } from './test/support/suites-first.js';

// .ci/run sets CI_REPORT_DIR to add up every suite's results in its summary line.
const report = process.env.CI_REPORT_DIR;

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // The container suite has its own configuration (test/containers/vitest.config.ts): it
    // builds the images first. So has the sanitizer suite (test/sanitizers/vitest.config.ts).
    // `npm test` runs them side by side after this one (scripts/test-suites.sh).
    exclude: [...configDefaults.exclude, 'test/containers/**', 'test/sanitizers/**'],
    // dist/ first: several suites start the built gateway (test/support/fresh-dist.ts).
    globalSetup: ['test/support/fresh-dist.ts', 'test/support/global-postgres.ts'],
    // Integration and end-to-end suites start real PostgreSQL, nginx and Node processes;
    // on a 2-core machine more than two files at once only adds contention.
    pool: 'forks',
    maxWorkers: 2,
    minWorkers: 1,
    // The files that run a shared suite first: short files, long runs (suites-first.ts).
    sequence: {
      sequencer: suitesFirst([
        'test/e2e/console.test.ts',
        'test/e2e/native.test.ts',
        'test/e2e/oidc-native.test.ts',
      ]),
    },
    testTimeout: 30_000,
    hookTimeout: 120_000,
    reporters: report ? ['default', ['json', { outputFile: `${report}/main.json` }]] : ['default'],
  },
});
