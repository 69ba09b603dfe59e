import { defineConfig } from 'vitest/config';

// Fast, pure unit tests of the security core: no database, no nginx, no child processes.
// The mutation run (stryker.config.mjs) uses exactly this set, so it stays minutes long.
export default defineConfig({
  test: {
    root: new URL('../..', import.meta.url).pathname,
    include: ['test/unit/**/*.test.ts'],
    testTimeout: 10_000,
  },
});
