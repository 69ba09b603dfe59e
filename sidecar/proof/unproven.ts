import type { ServerResponse } from 'node:http';
import { asciiJson, GatewayProofRequiredError } from '../errors/api-error.js';
import type { SidecarMetrics } from '../metrics/sidecar-metrics.js';
import type { ProofRoute, ProofVerdict } from './proof-gate.js';

/** The refusal's body, the one error shape (made once: it never changes). */
export const UNPROVEN_BODY = asciiJson(new GatewayProofRequiredError().body());
export const UNPROVEN_STATUS = 403;

/** Counts a refused unproven request (by closed labels only: nothing the peer sent). */
export function countUnproven(
  metrics: SidecarMetrics | null,
  route: ProofRoute,
  verdict: Extract<ProofVerdict, { ok: false }>,
): void {
  metrics?.unprovenRequests.inc({ route, reason: verdict.reason });
}

/** The refusal over HTTP (management's door): nothing of the request was read. */
export function refuseUnproven(res: ServerResponse): void {
  res.writeHead(UNPROVEN_STATUS, {
    'Content-Type': 'application/json',
    'Content-Length': Buffer.byteLength(UNPROVEN_BODY),
    'Cache-Control': 'no-store',
  });
  res.end(UNPROVEN_BODY);
}
