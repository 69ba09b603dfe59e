-- A new client is announced as `created:<id>` (common/contract.ts CREATED_NOTICE_PREFIX), apart
-- from changes (a bare id): nginx then forgets only that the id was unknown, and keeps what it
-- has learnt about the new client since. With a bare id, a notice that reached nginx after the
-- key's first request killed the record just learnt, and the next request asked the sidecar
-- again (docs/decisions/20261127-creation-notice.md). A sidecar older than this migration reads
-- the new payload as no id and ignores it: its nginx keeps an unknown id for at most 10 s.
CREATE OR REPLACE FUNCTION api_clients_notify_created() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('api_clients_changed', 'created:' || NEW.id::text);
  RETURN NULL;
END;
$$;
