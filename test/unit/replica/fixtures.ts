import { createHash } from 'node:crypto';
import type { ApiClientRow } from '../../../sidecar/clients/store/api-client.js';
import {
  EMPTY_KEY_TABLE_STATE,
  type KeyTableAnswer,
  type KeyTableState,
} from '../../../sidecar/nginx/key-table.js';

/** A client's row as the feed reads it: a key (the SHA-256 of `secret-<id>`), nothing else set. */
export const row = (id: number, name = `client-${id}`): ApiClientRow => ({
  id,
  name,
  isAdmin: false,
  apiClientId: null,
  keyHash: createHash('sha256').update(`secret-${id}`).digest(),
  createdAt: new Date(0),
  expiresAt: null,
  lastUsedAt: null,
  previousKeyHash: null,
  previousKeyExpiresAt: null,
  rateLimit: null,
  permissions: null,
});

/** nginx's answer of a replica in `phase` at `position` holding `records`, nothing else known. */
export const state = (
  phase: KeyTableState['phase'],
  position: string | null = null,
  records = 0,
): KeyTableAnswer => ({
  kind: 'state',
  state: { ...EMPTY_KEY_TABLE_STATE, phase, position, records },
});
