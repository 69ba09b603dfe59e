import { defineConfig } from 'vitest/config';

// .ci/run sets CI_REPORT_DIR to add up every suite's results in its summary line.
const report = process.env.CI_REPORT_DIR;

/**
 * The container suite: the project's images, built from this work tree by the global setup,
 * on a real container engine (podman here, through its Docker-compatible socket; DOCKER_HOST
 * when set). Part of `npm test`, after the main run. It fails, saying what is missing, when
 * the engine is not there; it never skips. Alone:
 *   npx vitest run --config test/containers/vitest.config.ts
 */
export default defineConfig({
  test: {
    root: new URL('../..', import.meta.url).pathname,
    include: ['test/containers/**/*.test.ts'],
    globalSetup: ['test/containers/global-setup.ts'],
    pool: 'forks',
    // One stack at a time: a 2-core machine gains nothing from more, and the revocation
    // tests measure nginx's cache window.
    maxWorkers: 1,
    minWorkers: 1,
    testTimeout: 60_000,
    hookTimeout: 240_000,
    reporters: report
      ? ['default', ['json', { outputFile: `${report}/containers.json` }]]
      : ['default'],
  },
});
