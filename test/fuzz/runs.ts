import fc from 'fast-check';

/**
 * Runs per property: 10^4 in the normal test run, 10^6 under `npm run fuzz` (FUZZ_RUNS).
 * A failure prints fast-check's seed and path; the shrunk counterexample goes into the
 * property's `examples` (see regressions in each file) so it is checked on every run after.
 */
export const RUNS = Number(process.env.FUZZ_RUNS ?? 10_000);

/** Parameters for one property: the run count, and the recorded counterexamples first. */
export function params<T>(examples: T[] = []): fc.Parameters<T> {
  return { numRuns: RUNS, examples };
}

/** Property tests at 10^6 runs take up to an hour (HTTP ones); vitest times each test. */
export const FUZZ_TIMEOUT_MS = Math.max(120_000, RUNS * 5);

/** Strings from every Unicode plane, including lone surrogates and control characters. */
export const anyText = (maxLength = 64) =>
  fc.oneof(
    fc.string({ unit: 'binary', maxLength }),
    fc.string({ unit: 'grapheme-ascii', maxLength }),
    fc.string({ unit: fc.constantFrom(...' \t\r\n.=;,:/%"\\\'-_aA0{}[]'.split('')), maxLength }),
  );

/** Any JSON value, nested. */
export const anyJson = fc.jsonValue({ maxDepth: 3 });
