/**
 * nginx's question to the sidecar (on `/auth`, in an auth frame, and on proxied management
 * requests): the settings it forwards, its proof, and which settings a cached decision depends on.
 */

import { REQUEST_ID } from './request.js';

/** The methods' switches in default.conf (spec 5.3): `true` or `false`. */
export const TOGGLE_VARIABLES = {
  apiKeys: '$api_keys_enabled',
  oidc: '$open_id_connect_enabled',
} as const;

/** Forwarded by nginx to the sidecar on `/auth` and on `/v1/management/`: header ← variable. */
export const FORWARDED_TO_SIDECAR: ReadonlyArray<{ header: string; variable: string }> = [
  { header: 'X-Gateway-Api-Keys-Enabled', variable: TOGGLE_VARIABLES.apiKeys },
  { header: 'X-Gateway-Oidc-Enabled', variable: TOGGLE_VARIABLES.oidc },
  { header: 'X-Gateway-Oidc-Discovery', variable: '$oidc_discovery' },
  { header: 'X-Gateway-Oidc-Ssl-Verify', variable: '$oidc_ssl_verify' },
  { header: 'X-Gateway-Oidc-Accept-Unsupported-Alg', variable: '$oidc_accept_unsupported_alg' },
  { header: 'X-Gateway-Oidc-Accept-None-Alg', variable: '$oidc_accept_none_alg' },
  { header: 'X-Gateway-Oidc-Redirect-Uri', variable: '$oidc_redirect_uri' },
  { header: 'X-Gateway-Oidc-Client-Id-Claim', variable: '$oidc_client_id_claim' },
  { header: 'X-Gateway-Oidc-Client-Name-Claim', variable: '$oidc_client_name_claim' },
  { header: 'X-Gateway-Oidc-Audience', variable: '$oidc_audience' },
  { header: 'X-Original-Method', variable: '$request_method' },
  { header: 'X-Original-URI', variable: '$request_uri' },
  REQUEST_ID,
];

/**
 * What a decision depends on besides the credential: the methods and OIDC options in force.
 * Part of the decision cache's key, so an edited and reloaded default.conf never reuses an
 * answer given under other settings.
 */
// Forwarded, but not inputs of a cached decision (the request's own, and what bearer checks ignore).
const NOT_DECISION_INPUTS: readonly string[] = [
  '$request_method',
  '$request_uri',
  '$oidc_redirect_uri',
  REQUEST_ID.variable,
];

export const DECISION_VARIABLES: readonly string[] = FORWARDED_TO_SIDECAR.map(
  (row) => row.variable,
).filter((v) => !NOT_DECISION_INPUTS.includes(v));

/**
 * nginx's proof to the sidecar (docs/decisions/20261202-sidecar-trusts-only-nginx.md): a
 * per-install secret in `file` (relative to the configuration directory, beside default.conf),
 * made once by the generator and never rewritten. nginx sends it under `header` on every
 * question and every proxied management request; the sidecar refuses anything without it
 * (`code`, 403) before reading a single setting header. Never a decision input, never sent to
 * the application.
 */
export const SIDECAR_PROOF = {
  header: 'X-Gateway-Proof',
  /** Set only in the management location (by Lua), for its proxy_set_header. */
  variable: '$gateway_proof',
  file: 'nginx/conf.d/sidecar-proof.key',
  code: 'GATEWAY_PROOF_REQUIRED',
} as const;

/** Sent by nginx on management paths: the sidecar requires an admin. */
export const REQUIRE_ADMIN_HEADER = 'X-Gateway-Require-Admin';
