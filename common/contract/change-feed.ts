/**
 * The PostgreSQL channel that announces API client changes, and its notices' shapes.
 */

/**
 * PostgreSQL channel on which a change of an API client is announced. Payload: the row id for
 * an update or a delete; `CREATED_NOTICE_PREFIX` and the row id for a new client.
 */
export const CLIENT_CHANGES_CHANNEL = 'api_clients_changed';

/** Before the row id in a new client's notice (migration 0010): `created:42`. */
export const CREATED_NOTICE_PREFIX = 'created:';

/**
 * A sidecar's heartbeat on the same channel: `beat:<sender>:<n>:<epoch>:<position>`, the feed's
 * head as the NOTIFY's own statement saw it. Received on the LISTEN connection, it proves
 * notices are being delivered (docs/decisions/20261201-no-change-skipped.md); other sidecars'
 * beats are ignored, older sidecars ignore them all.
 */
export const BEAT_NOTICE_PREFIX = 'beat:';
