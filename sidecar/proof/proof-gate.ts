import type { IncomingHttpHeaders } from 'node:http';

/**
 * Whether a request to the sidecar was sent by the gateway's nginx: a value, as every auth
 * decision here is. `missing`: no proof header; `malformed`: not a secret's shape (or sent
 * twice); `wrong`: another secret; `no_secret`: this sidecar has none to compare with (its file
 * is absent or malformed), so it can prove nobody.
 */
export type ProofVerdict =
  | { ok: true }
  | { ok: false; reason: 'missing' | 'malformed' | 'wrong' | 'no_secret' };

/** The reasons, as a closed set: the unproven-requests metric's label values. */
export const UNPROVEN_REASONS = ['missing', 'malformed', 'wrong', 'no_secret'] as const;

/** What the sidecar asks before it reads any header nginx sets (docs/decisions/20261202-...). */
export interface ProofGate {
  /** The verdict from the secret held now: synchronous, on every request. */
  check(headers: IncomingHttpHeaders): ProofVerdict;
  /**
   * Asked after a refusal: reads the secret's file again (a rotation, or a file made after this
   * sidecar started), at most once a second, then decides again.
   */
  recheck(headers: IncomingHttpHeaders): Promise<ProofVerdict>;
}

/** Which of the sidecar's doors an unproven request knocked at (a metric label). */
export type ProofRoute = 'auth' | 'management';
