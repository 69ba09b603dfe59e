// Mutation testing of the security core (docs/decisions/20261123-mutation-and-fuzz-testing.md).
// Only the fast unit tests under test/unit run against each mutant, so a full run on two cores
// takes minutes; CI runs it incrementally from the committed file below.
/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  testRunner: 'vitest',
  vitest: { configFile: 'test/unit/vitest.config.ts' },
  plugins: ['@stryker-mutator/vitest-runner'],
  coverageAnalysis: 'perTest',
  mutate: [
    'sidecar/keys/api-key.ts',
    // requireAdmin (sidecar/auth/require-admin.ts) among them.
    'sidecar/auth/*.ts',
    'sidecar/oidc/algorithms.ts',
    'sidecar/oidc/claims.ts',
    'sidecar/oidc/discovery.ts',
    'sidecar/oidc/jws.ts',
    'sidecar/oidc/key-set.ts',
    'sidecar/oidc/token-errors.ts',
    'sidecar/oidc/verifier.ts',
    'generator/nginx-literal.ts',
    'common/contract.ts',
    'common/contract/*.ts',
    'common/gateway-errors.ts',
    'generator/lua-contract.ts',
    'generator/template-model.ts',
    // Only the TLS part of the settings schema: protocols, default ciphers, their checks.
    // Line ranges, so re-check them when that file changes.
    'generator/settings-schema.ts:16-26',
    'generator/settings-schema.ts:128-131',
    'generator/settings-schema.ts:154-163',
    'generator/trusted-proxies.ts',
  ],
  ignorePatterns: ['dist', '.gateway', 'reports', 'bench', 'docker'],
  concurrency: 2,
  incremental: true,
  incrementalFile: 'test/mutation/stryker-incremental.json',
  reporters: ['clear-text', 'progress', 'html'],
  htmlReporter: { fileName: 'reports/mutation/index.html' },
  // The per-test listing ran to hundreds of lines at the end of CI's output, pushing the test
  // suites' own failures out of the tail CI keeps; the HTML report has it all.
  clearTextReporter: { reportTests: false },
  thresholds: { high: 98, low: 95, break: 95 },
  tempDirName: '.stryker-tmp',
  cleanTempDir: 'always',
};
