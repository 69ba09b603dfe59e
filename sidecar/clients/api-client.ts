/** An API client as stored; `keyHash` never leaves the sidecar. */
export interface ApiClientRow {
  id: number;
  name: string;
  isAdmin: boolean;
  apiClientId: string | null;
  keyHash: Buffer | null;
  createdAt: Date;
}

/**
 * The public record returned by the management routes: never a secret or a hash. `id` is what
 * DCT's SDKs read; `api_key_id`, the seed's name for the same number, stays.
 */
export interface ApiClientRecord {
  id: number;
  api_key_id: number;
  name: string;
  is_admin: boolean;
  api_client_id: string | null;
  has_api_key: boolean;
  created_at: string;
}

export function toRecord(row: ApiClientRow): ApiClientRecord {
  return {
    id: row.id,
    api_key_id: row.id,
    name: row.name,
    is_admin: row.isAdmin,
    api_client_id: row.apiClientId,
    has_api_key: row.keyHash !== null,
    created_at: row.createdAt.toISOString(),
  };
}

/**
 * Who a request comes from, as passed upstream. For an API key `clientId` is the numeric id
 * and `clientName` the client's name; for a bearer token both come from the configured
 * claims (spec 5.3.4), and `id` is the matching API client's numeric id.
 */
export interface Identity {
  id: number;
  clientId: string;
  clientName: string;
  isAdmin: boolean;
}
