import { configDefaults, defineConfig } from 'vitest/config';

// .ci/run sets CI_REPORT_DIR to add up every suite's results in its summary line.
const report = process.env.CI_REPORT_DIR;

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // The container suite has its own configuration (test/containers/vitest.config.ts): it
    // builds the images first and runs after this one in `npm test`.
    // So has the sanitizer suite (test/sanitizers/vitest.config.ts), after it.
    exclude: [...configDefaults.exclude, 'test/containers/**', 'test/sanitizers/**'],
    // dist/ first: several suites start the built gateway (test/support/fresh-dist.ts).
    globalSetup: ['test/support/fresh-dist.ts', 'test/support/global-postgres.ts'],
    // Integration and end-to-end suites start real PostgreSQL, nginx and Node processes;
    // on a 2-core machine more than two files at once only adds contention.
    pool: 'forks',
    maxWorkers: 2,
    minWorkers: 1,
    testTimeout: 30_000,
    hookTimeout: 120_000,
    reporters: report ? ['default', ['json', { outputFile: `${report}/main.json` }]] : ['default'],
  },
});
