/**
 * The sidecar's answer to nginx: the identity passed to the app, what nginx keeps of a decision or
 * a key record, and the refusal details it relays.
 */

/**
 * Identity the sidecar answers on a 2xx: the Lua code copies it into `variable`, which nginx
 * sets on the upstream request under the same header name, replacing any the caller sent.
 * Values are percent-encoded UTF-8 (encodeURIComponent) where they are free text.
 */
export const IDENTITY_FROM_SIDECAR: ReadonlyArray<{
  role: 'client_id' | 'client_name' | 'is_admin' | 'method';
  header: string;
  variable: string;
}> = [
  { role: 'client_id', header: 'X-Client-Id', variable: '$client_id' },
  { role: 'client_name', header: 'X-Client-Name', variable: '$client_name' },
  { role: 'is_admin', header: 'X-Client-Is-Admin', variable: '$client_is_admin' },
  { role: 'method', header: 'X-Auth-Method', variable: '$client_auth_method' },
];

/** Sidecar → nginx only, on a 2xx: never forwarded to the app. */
export const DECISION_FROM_SIDECAR = {
  /** The API client's row id: the unit of invalidation. */
  clientRow: 'X-Gateway-Client-Row',
  /**
   * Unix time (seconds) after which the decision no longer holds: the earliest of a token's
   * `exp`, the client's `expires_at` and a rotated-out secret's grace end.
   */
  validUntil: 'X-Gateway-Valid-Until',
  /**
   * On an API-key answer, 2xx or 401: `known` or `unknown`, the key id being the client row.
   * With the headers below nginx keeps a key record and decides later requests for that id
   * itself (docs/decisions/20261125-miss-path.md). Never a secret: hashes as stored.
   */
  keyRecord: 'X-Gateway-Key-Record',
  /** Hex SHA-256 of the client's secret; absent: the client has no key. */
  keyHash: 'X-Gateway-Key-Hash',
  /** Hex SHA-256 of a rotated-out secret, and the Unix time (s) its grace ends. */
  previousKeyHash: 'X-Gateway-Previous-Key-Hash',
  previousKeyUntil: 'X-Gateway-Previous-Key-Until',
  /** Unix time (s) from which the client is expired; absent: never. */
  expiresAt: 'X-Gateway-Expires-At',
  /**
   * On a 2xx and on a known key record: the client's rate limit as `<requests> <per_seconds>`;
   * absent: none. Kept with the decision or record, so a change reaches nginx by the same push
   * as a revocation (docs/decisions/20261125-rate-limits-and-usage.md).
   */
  rateLimit: 'X-Gateway-Rate-Limit',
  /**
   * On a 2xx and on a known key record: the client's permissions in PERMISSIONS_TEXT; absent:
   * none (it may call everything). Kept with the decision or record like the rate limit
   * (docs/decisions/20261128-permissions.md).
   */
  permissions: 'X-Gateway-Permissions',
} as const;

/** Refusal details the sidecar answers on 401/403, relayed to the caller. */
export const REFUSAL_FROM_SIDECAR = {
  challenge: 'WWW-Authenticate',
  jwtError: 'X-jwt-error',
} as const;

/** nginx's variable for a response header of the (sub)request's upstream. */
export function upstreamHeaderVariable(header: string): string {
  return `$upstream_http_${header.toLowerCase().replaceAll('-', '_')}`;
}
