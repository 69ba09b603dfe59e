/**
 * The header contract between nginx and the sidecar, as data
 * (docs/decisions/20261122-nginx-sidecar-contract.md). The template model turns these rows
 * into `proxy_set_header` and `auth_request_set` lines, so the rendered files and the
 * decision cannot drift apart silently: the golden files would change.
 */

/** Forwarded by nginx to the sidecar on `/auth` and on `/v1/management/`: header ← variable. */
export const FORWARDED_TO_SIDECAR: ReadonlyArray<{ header: string; variable: string }> = [
  { header: 'X-Gateway-Api-Keys-Enabled', variable: '$api_keys_enabled' },
  { header: 'X-Gateway-Oidc-Enabled', variable: '$open_id_connect_enabled' },
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
];

/**
 * Identity the sidecar answers on a 2xx: copied with `auth_request_set` into `variable`, then
 * set on the upstream request under the same header name, replacing any the caller sent.
 */
export const IDENTITY_FROM_SIDECAR: ReadonlyArray<{ header: string; variable: string }> = [
  { header: 'X-Client-Id', variable: '$client_id' },
  { header: 'X-Client-Name', variable: '$client_name' },
  { header: 'X-Client-Is-Admin', variable: '$client_is_admin' },
  { header: 'X-Auth-Method', variable: '$client_auth_method' },
];

/** Refusal details the sidecar answers on 401/403, kept for the caller's error response. */
export const REFUSAL_FROM_SIDECAR: ReadonlyArray<{ header: string; variable: string }> = [
  { header: 'X-Auth-Error-Body', variable: '$auth_error_body' },
  { header: 'X-jwt-error', variable: '$auth_jwt_error' },
];

/** nginx's variable for a response header of the (sub)request's upstream. */
export function upstreamHeaderVariable(header: string): string {
  return `$upstream_http_${header.toLowerCase().replaceAll('-', '_')}`;
}
