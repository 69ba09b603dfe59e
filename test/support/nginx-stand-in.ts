import type { ProofGate } from '../../sidecar/proof/proof-gate.js';

/**
 * The proof gate of tests that ask the sidecar directly, standing in for nginx (they send the
 * headers nginx would): every request counts as nginx's. The gate itself is tested in
 * test/unit/proof/ and, with real nginx, in test/e2e/sidecar-trust.test.ts.
 */
export const STAND_IN_FOR_NGINX: ProofGate = {
  check: () => ({ ok: true }),
  recheck: async () => ({ ok: true }),
};
