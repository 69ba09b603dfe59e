import { defineConfig } from 'vitest/config';
import { suitesFirst } from '../support/suites-first.js';

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
    pool: 'forks',
    // Two stacks at a time: a stack mostly waits (on podman, its health checks, PostgreSQL's
    // first start), and no two files share a name, a port or a network (each its own labels,
    // free ports and compose project). Revocation in containers is pushed (no cache window
    // to measure), so nothing here times nginx against the clock of another stack.
    maxWorkers: 2,
    minWorkers: 1,
    // The shared suites' files first: short files, long runs (suites-first.ts).
    sequence: {
      sequencer: suitesFirst([
        'test/containers/console.test.ts',
        'test/containers/gateway.test.ts',
      ]),
    },
    testTimeout: 60_000,
    hookTimeout: 240_000,
    reporters: report
      ? ['default', ['json', { outputFile: `${report}/containers.json` }]]
      : ['default'],
  },
});
