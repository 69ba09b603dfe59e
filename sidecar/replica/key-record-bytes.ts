import { KEY_RECORD } from '../../common/contract.js';
import { permissionsText } from '../../common/permissions.js';
import type { ApiClientRow } from '../clients/store/api-client.js';

/** The columns of a client that its key record in nginx's replica holds. */
export type KeyTableRow = Pick<
  ApiClientRow,
  | 'id'
  | 'name'
  | 'isAdmin'
  | 'keyHash'
  | 'expiresAt'
  | 'previousKeyHash'
  | 'previousKeyExpiresAt'
  | 'rateLimit'
  | 'permissions'
>;

const F = KEY_RECORD.flags;
const LENGTH_MAX = 255;

/**
 * Pure: the record of `row` in KEY_RECORD's bytes (lua/gateway/key_table.lua and the nginx
 * module read it): what nginx needs to decide any request for the client's key id by itself,
 * never a secret. The name is percent-encoded, as the identity header carries it.
 */
export function keyRecordBytes(row: KeyTableRow): Buffer {
  let flags = row.isAdmin ? F.admin : 0;
  const parts: Buffer[] = [];
  if (row.keyHash) {
    flags |= F.key;
    parts.push(hash(row.keyHash));
  }
  // A rotated-out secret counts only with its grace end (key-record.ts reads them the same).
  if (row.previousKeyHash && row.previousKeyExpiresAt) {
    flags |= F.previous;
    parts.push(hash(row.previousKeyHash), text(seconds(row.previousKeyExpiresAt)));
  }
  if (row.expiresAt) {
    flags |= F.expires;
    parts.push(text(seconds(row.expiresAt)));
  }
  if (row.rateLimit) {
    flags |= F.limit;
    parts.push(text(`${row.rateLimit.requests} ${row.rateLimit.perSeconds}`));
  }
  // The rules' text can be longer than a length byte says: its length first, as text.
  if (row.permissions) {
    flags |= F.rules;
    const rules = Buffer.from(permissionsText(row.permissions), 'latin1');
    parts.push(text(String(rules.length)), rules);
  }
  parts.push(Buffer.from(encodeURIComponent(row.name), 'latin1'));
  return Buffer.concat([Buffer.from([KEY_RECORD.version, flags]), ...parts]);
}

/** The record a deleted client leaves: its id is nobody's while the replica is trusted. */
export const GONE_RECORD: Buffer = Buffer.from([KEY_RECORD.version, KEY_RECORD.flags.gone]);

/**
 * The record of an id in doubt: a change to it was notified but its row could not be read (a
 * lock, a refused connection, a terminated backend). Format 0, which neither the Lua code nor
 * the nginx module decodes, so nginx neither uses an old record nor refuses the id as nobody's:
 * it asks the sidecar, which asks PostgreSQL (503 while it cannot answer). The next catch-up
 * replaces it with the row as it is (docs/decisions/20261201-no-change-skipped.md).
 */
export const DOUBT_RECORD: Buffer = Buffer.from([0, 0]);

function hash(value: Buffer): Buffer {
  if (value.length !== KEY_RECORD.hashBytes) throw new Error('a key hash is 32 bytes');
  return value;
}

/** A length byte, then the text (ASCII). */
function text(value: string): Buffer {
  if (value.length > LENGTH_MAX) throw new Error('a record field is at most 255 bytes');
  return Buffer.concat([Buffer.from([value.length]), Buffer.from(value, 'latin1')]);
}

/** Unix seconds with the milliseconds kept, as the /auth answer's headers give them. */
function seconds(date: Date): string {
  return (date.getTime() / 1000).toFixed(3);
}
