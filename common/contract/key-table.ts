/**
 * The key table's replica in nginx: its dict, its state keys, and a key record's bytes.
 */

/**
 * The key table's replica in nginx (docs/decisions/20261127-key-table-replica.md): every API
 * client's key record in a shared dict of its own, loaded by the sidecar when a pair starts and
 * kept current by the change feed. A record is binary (`KEY_RECORD`); the dict's other keys
 * (`state`, never an id: ids are digits) say how far nginx may trust it.
 */
export const KEY_TABLE = {
  /** The shared dict; absent from default.conf: no replica (nginx asks as before). */
  dict: 'gateway_key_table',
  /** The control socket's location for the replica (GET: its state; POST: load, apply, drop). */
  controlPath: '/key-table',
  /** `set` in the control location: how long nginx decides from its replica without news. */
  trustVariable: '$key_table_trust_s',
  state: {
    /** Unix time (s) until which held records are trusted; absent or past: not complete. */
    trustedUntil: '#trusted_until',
    /** Unix time (s) until which an id the replica does not hold is refused as nobody's. */
    liveUntil: '#live_until',
    /** `<epoch>:<position>` of the change feed the replica reflects. */
    position: '#position',
    /** `loading` or `complete`; absent: empty. */
    phase: '#phase',
    /** Present (true) once a record could not be stored: ids not held are asked about. */
    full: '#full',
    /** Records held (a number kept by the Lua code). */
    records: '#records',
    /** The largest client id held (ids only grow): an id just above it may be brand new. */
    maxId: '#max_id',
    /** Seconds the last full load took, and when it completed (Unix time). */
    loadSeconds: '#load_s',
    loadedAt: '#loaded_at',
    /**
     * A number that changes whenever any record does (set at each load to the load's Unix
     * second × 10⁶, so never again to a value an earlier load had, then one up per apply that
     * stores or deletes records): the nginx module keeps copies of the records in each worker,
     * and when it changes drops the ones `changes` names, or all of them
     * (docs/decisions/20261128-worker-record-copies.md, 20261129-worker-copies-kept.md).
     */
    version: '#version',
  },
  /**
   * Which ids each version changed: the key `<prefix><version mod slots>` holds
   * `<version> <id> <id>…` (at most `ids` of them) or `<version> *` (more, or unknown), written
   * after the version moved on. A worker behind by at most `slots` versions drops the copies of
   * the ids named; a slot holding another version, or a `*`, drops them all.
   */
  changes: { prefix: '#changed:', slots: 64, ids: 32 },
  /** How long after the sidecar's last word an unknown id is still refused by nginx alone. */
  liveSeconds: 5,
  /**
   * Ids this far below the largest one held are asked about, not refused: a client created on
   * another pair a moment ago, committed out of id order beside other creators, passes at once.
   */
  newIdBand: 1_000,
  /**
   * Ids up to this far above the largest one held are asked about, not refused: clients
   * committed a moment ago whose notice has not reached this pair yet, a bulk import of up to
   * this many included (a caller who read the ids from the commit may use them before the
   * notice lands). A guessed id, almost always far above, is still refused by nginx alone
   * (docs/decisions/20261202-ids-ahead-of-their-notice.md).
   */
  newIdReach: 10_000_000,
} as const;

/**
 * A key record in the replica: bytes, not text, so a client costs one 128-byte slab of shared
 * memory (docs/decisions/20261127-key-table-replica.md). Read by lua/gateway/key_table.lua and
 * the nginx module; written by sidecar/replica/key-record-bytes.ts.
 *   byte 1: the format (`version`); byte 2: `flags`
 *   [32 bytes: SHA-256 of the current secret]          when flags has `key`
 *   [32 bytes: SHA-256 of a rotated-out secret,
 *    1 byte n, n bytes: its grace end (Unix s, text)]   when flags has `previous`
 *   [1 byte n, n bytes: expiry (Unix s, text)]          when flags has `expires`
 *   [1 byte n, n bytes: `<requests> <per_seconds>`]     when flags has `limit`
 *   [1 byte n, n bytes: L in decimal, L bytes:
 *    the client's permissions in PERMISSIONS_TEXT]     when flags has `rules`
 *   the rest: the client's name, percent-encoded (as the identity header carries it)
 * The nginx module passes a client with `rules` only on a request they allow
 * (ngx_http_gateway_hit_permits, the same matcher as lua/gateway/permissions.lua); any other
 * request is Lua's, which refuses it.
 * A deleted client leaves a record of its own (flags `gone`, nothing after): its id is refused
 * by nginx alone for as long as the replica is trusted, a database outage included.
 */
export const KEY_RECORD = {
  version: 1,
  flags: { admin: 1, key: 2, previous: 4, expires: 8, limit: 16, gone: 32, rules: 64 },
  hashBytes: 32,
} as const;
