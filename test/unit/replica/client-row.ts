import { createHash } from 'node:crypto';
import type { ApiClientRow } from '../../../sidecar/clients/api-client.js';

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
