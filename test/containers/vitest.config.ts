import { defineConfig } from 'vitest/config';

/**
 * The container suite: real images on a real container engine (podman here, through its
 * Docker-compatible socket). Kept out of the default `npm test` run, which needs no engine;
 * it fails, saying what is missing, when the engine or an image is not there.
 *   eval "$(docker/setup-podman.sh)" && eval "$(docker/build-airgapped-images.sh)"
 *   npx vitest run --config test/containers/vitest.config.ts
 */
export default defineConfig({
  test: {
    root: new URL('../..', import.meta.url).pathname,
    include: ['test/containers/**/*.spec.ts'],
    pool: 'forks',
    // One stack at a time: a 2-core machine gains nothing from more.
    maxWorkers: 1,
    minWorkers: 1,
    testTimeout: 60_000,
    hookTimeout: 240_000,
    reporters: ['default'],
  },
});
