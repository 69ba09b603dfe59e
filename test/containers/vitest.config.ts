import { defineConfig } from 'vitest/config';

// .ci/run sets CI_REPORT_DIR to add up every suite's results in its summary line.
const report = process.env.CI_REPORT_DIR;

/**
 * The container suite: the project's images, built from this work tree by the global setup,
 * on a real container engine (podman here, through its Docker-compatible socket; DOCKER_HOST
 * when set). Part of `npm test`, after the main run, beside the sanitizer suite
 * (scripts/test-suites.sh). It fails, saying what is missing, when the engine is not there;
 * it never skips. Alone:
 *   npx vitest run --config test/containers/vitest.config.ts
 */
export default defineConfig({
  test: {
    root: new URL('../..', import.meta.url).pathname,
    include: ['test/containers/**/*.test.ts'],
    globalSetup: ['test/containers/global-setup.ts'],
    setupFiles: ['test/containers/each-file.ts'],
    pool: 'forks',
    // One stack at a time. Two were tried (docs/decisions/20261202-ci-side-by-side.md): each
    // file ran about twice as long, the suite took longer than one at a time (755 s against
    // 623 s), the console's browser timed out while another stack came and went, and
    // gateway-module's count of GatewayContainer's containers saw another file's.
    maxWorkers: 1,
    minWorkers: 1,
    testTimeout: 60_000,
    hookTimeout: 240_000,
    reporters: report
      ? ['default', ['json', { outputFile: `${report}/containers.json` }]]
      : ['default'],
  },
});
