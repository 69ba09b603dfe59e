import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/support/global-postgres.ts'],
    // Integration and end-to-end suites start real PostgreSQL, nginx and Node processes;
    // on a 2-core machine more than two files at once only adds contention.
    pool: 'forks',
    maxWorkers: 2,
    minWorkers: 1,
    testTimeout: 30_000,
    hookTimeout: 120_000,
    reporters: ['default'],
  },
});
