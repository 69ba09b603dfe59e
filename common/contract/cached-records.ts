/**
 * The text records nginx keeps in its dicts (learnt key records, cached decisions): their fields
 * in order, and how long the settings let a decision live.
 */

/**
 * The fields of a key record learnt from the sidecar's answer (the keys dict, with the key table
 * off or for ids it does not hold), tab-separated in this order: lua/gateway/key_records.lua
 * writes and reads them, the nginx module reads them (both generated from this list). Hashes in
 * hex, times as Unix seconds, absent values empty; `limit` absent in a record stored before
 * limits, `permissions` for a client without rules (the module checks them as Lua does).
 */
export const LEARNT_KEY_FIELDS = [
  'created',
  'kind',
  'expires_at',
  'previous_until',
  'is_admin',
  'client_id',
  'client_name',
  'hash',
  'previous_hash',
  'limit',
  'permissions',
] as const;

/**
 * The fields of a cached decision (the decisions dict), tab-separated in this order:
 * lua/gateway/decision_entry.lua writes and reads them, the nginx module reads them (both
 * generated from this list). `limit` absent in an entry stored before limits, `permissions` for
 * a client without rules (the module checks them as Lua does).
 */
export const DECISION_FIELDS = [
  'created',
  'row',
  'is_admin',
  'method',
  'client_id',
  'client_name',
  'limit',
  'permissions',
] as const;

/** The largest `auth_cache.max_age_ms` the settings accept. */
export const MAX_AGE_LIMIT_MS = 3_600_000;
