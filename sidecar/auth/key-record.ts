import { DECISION_FROM_SIDECAR, IDENTITY_FROM_SIDECAR } from '../../common/contract.js';
import { permissionsText } from '../../common/permissions.js';
import type { ApiClientRow, Identity } from '../clients/store/api-client.js';

/**
 * What nginx may keep about an API key id so that it decides later requests for that id by
 * itself, right secret or wrong (docs/decisions/20261125-miss-path.md): the client's identity,
 * the SHA-256 of its secrets (what PostgreSQL stores, never a secret) and when they stop
 * counting. `unknown`: no client has this id (yet); a create pushes the id's invalidation.
 */
export type KeyRecord =
  | { kind: 'unknown'; id: number }
  | {
      kind: 'known';
      id: number;
      identity: Identity;
      /** null: the client has no API key, so every secret is wrong. */
      keyHash: Buffer | null;
      /** A rotated-out secret and the Unix time (s) its grace ends; both or neither. */
      previous: { hash: Buffer; until: number } | null;
      /** Unix time (s) from which a right secret is API_CLIENT_EXPIRED; null: never. */
      expiresAt: number | null;
    };

/**
 * Records and their headers already made, by the row or record they come from: the questions
 * of one look-up batch share its row objects, and a busy client's questions share a batch.
 * Both are immutable once made.
 */
const recordOfRow = new WeakMap<ApiClientRow, KeyRecord>();
const headersOfRecord = new WeakMap<KeyRecord, Readonly<Record<string, string>>>();

/** The record of `row` (looked up by key id), or of an id no client has. */
export function keyRecordOf(id: number, row: ApiClientRow | null): KeyRecord {
  if (!row) return { kind: 'unknown', id };
  let record = recordOfRow.get(row);
  if (!record) {
    record = knownRecord(row);
    recordOfRow.set(row, record);
  }
  return record;
}

function knownRecord(row: ApiClientRow): KeyRecord {
  const grace = row.previousKeyExpiresAt;
  return {
    kind: 'known',
    id: row.id,
    identity: {
      id: row.id,
      clientId: String(row.id),
      clientName: row.name,
      isAdmin: row.isAdmin,
      rateLimit: row.rateLimit,
      permissions: row.permissions,
    },
    keyHash: row.keyHash,
    previous:
      row.previousKeyHash && grace ? { hash: row.previousKeyHash, until: seconds(grace) } : null,
    expiresAt: row.expiresAt ? seconds(row.expiresAt) : null,
  };
}

/** Unix seconds with the milliseconds kept: nginx compares them with its own clock. */
function seconds(date: Date): number {
  return date.getTime() / 1000;
}

/**
 * The identity headers of a "yes" (also a known key record's): free text percent-encoded, so
 * nginx can keep them in one tab-separated entry; the rate limit and the permissions, when the
 * client has them.
 */
export function identityHeaders(identity: Identity, method: string): Record<string, string> {
  const values = {
    client_id: encodeURIComponent(identity.clientId),
    client_name: encodeURIComponent(identity.clientName),
    is_admin: identity.isAdmin ? 'true' : 'false',
    method,
  };
  const headers: Record<string, string> = {
    [DECISION_FROM_SIDECAR.clientRow]: String(identity.id),
  };
  for (const row of IDENTITY_FROM_SIDECAR) headers[row.header] = values[row.role];
  const limit = identity.rateLimit;
  if (limit) headers[DECISION_FROM_SIDECAR.rateLimit] = `${limit.requests} ${limit.perSeconds}`;
  // Absent for null (everything); "0" for an empty list (nothing), never an empty value.
  if (identity.permissions)
    headers[DECISION_FROM_SIDECAR.permissions] = permissionsText(identity.permissions);
  return headers;
}

/** The record as headers of the /auth answer (nginx only; never relayed to the caller). */
export function keyRecordHeaders(record: KeyRecord): Readonly<Record<string, string>> {
  let headers = headersOfRecord.get(record);
  if (!headers) {
    headers = recordHeaders(record);
    headersOfRecord.set(record, headers);
  }
  return headers;
}

function recordHeaders(record: KeyRecord): Record<string, string> {
  const h = DECISION_FROM_SIDECAR;
  if (record.kind === 'unknown') {
    return { [h.keyRecord]: 'unknown', [h.clientRow]: String(record.id) };
  }
  const headers: Record<string, string> = {
    ...identityHeaders(record.identity, 'apk'),
    [h.keyRecord]: 'known',
  };
  if (record.keyHash) headers[h.keyHash] = record.keyHash.toString('hex');
  if (record.previous) {
    headers[h.previousKeyHash] = record.previous.hash.toString('hex');
    headers[h.previousKeyUntil] = record.previous.until.toFixed(3);
  }
  if (record.expiresAt !== null) headers[h.expiresAt] = record.expiresAt.toFixed(3);
  return headers;
}
