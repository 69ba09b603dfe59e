import { LUA_ANSWERS } from '../../common/gateway-errors.js';
import { isExpired } from '../clients/store/api-client.js';
import type { ClientDirectory } from '../clients/store/directory.js';
import type { Clock } from '../clock.js';
import { hashMatches, hashSecret, parseApiKey } from '../keys/api-key.js';
import {
  type AuthDecision,
  type AuthFailure,
  expiredRefusal,
  refuse,
  validUntil,
} from './decision.js';
import { keyRecordOf } from './key-record.js';

/**
 * Verifies `apk <id>.<secret>`: look the client up by id, compare hashes in constant time,
 * against the current secret and, during a rotation's grace period, the previous one. A
 * right secret of an expired client is API_CLIENT_EXPIRED; a wrong one is INVALID_API_KEY
 * whatever the client's state, so a guess learns nothing about it.
 */
export class ApiKeyVerifier {
  constructor(
    private readonly clients: Pick<ClientDirectory, 'byId'>,
    private readonly now: Clock = Date.now,
  ) {}

  async verify(key: string): Promise<AuthDecision> {
    const parsed = parseApiKey(key);
    if (!parsed.ok) return refuse('MALFORMED_CREDENTIALS', parsed.reason, { scheme: 'apk' });
    const row = await this.clients.byId(parsed.id);
    const keyRecord = keyRecordOf(parsed.id, row);
    const invalid = (): AuthFailure => ({
      ...refuse('INVALID_API_KEY', LUA_ANSWERS.invalidApiKey.message, { scheme: 'apk' }),
      keyRecord,
    });
    if (!row) return invalid();
    const now = this.now();
    const presented = hashSecret(parsed.secret);
    // Both comparisons always run when both hashes exist: which one matched takes equal time.
    const current = row.keyHash !== null && hashMatches(presented, row.keyHash);
    // No grace end: the previous hash is never accepted.
    const graceEnd = row.previousKeyExpiresAt?.getTime() ?? 0;
    const previous =
      row.previousKeyHash !== null && hashMatches(presented, row.previousKeyHash) && graceEnd > now;
    if (!current && !previous) return { ...invalid(), clientRow: row.id };
    if (isExpired(row, now)) return { ...expiredRefusal(row.id, 'apk'), keyRecord };
    return {
      ok: true,
      method: 'apk',
      identity: {
        id: row.id,
        clientId: String(row.id),
        clientName: row.name,
        isAdmin: row.isAdmin,
        rateLimit: row.rateLimit,
        permissions: row.permissions,
      },
      validUntil: validUntil([row.expiresAt?.getTime(), current ? undefined : graceEnd]),
      keyRecord,
    };
  }
}
