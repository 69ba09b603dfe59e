-- The change feed's positions (docs/decisions/20261127-key-table-replica.md). Every change that
-- notifies (a new client, a deletion, an update of a column nginx's key record holds) also
-- appends a row here, in the same transaction, so a sidecar whose LISTEN connection was cut
-- reads what changed since the position its nginx's replica reflects instead of dropping
-- everything. Positions come from a sequence: commit order may differ from position order, so
-- a catch-up re-reads a margin of positions before its own (the changes are idempotent).
CREATE TABLE api_client_feed (
  position   bigserial   PRIMARY KEY,
  client_row bigint      NOT NULL,
  changed_at timestamptz NOT NULL DEFAULT now()
);
-- Pruning walks the oldest rows first.
CREATE INDEX api_client_feed_changed_at ON api_client_feed (changed_at);

-- Which database the positions belong to: a replica whose epoch differs (a restored or new
-- database, a sequence restarted) cannot catch up and is loaded again. `pruned_through`: the
-- last position pruned; a replica older than it has a gap and is loaded again.
CREATE TABLE api_client_feed_epoch (
  only_row       boolean PRIMARY KEY DEFAULT true CHECK (only_row),
  epoch          text    NOT NULL DEFAULT md5(random()::text || clock_timestamp()::text),
  pruned_through bigint  NOT NULL DEFAULT 0
);
INSERT INTO api_client_feed_epoch DEFAULT VALUES;

-- The notifications of migrations 0003 and 0010, each now also a position in the feed. The
-- triggers that call them (and their WHEN conditions) are unchanged.
CREATE OR REPLACE FUNCTION api_clients_notify_change() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO api_client_feed (client_row) VALUES (OLD.id);
  PERFORM pg_notify('api_clients_changed', OLD.id::text);
  RETURN NULL;
END;
$$;

CREATE OR REPLACE FUNCTION api_clients_notify_created() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO api_client_feed (client_row) VALUES (NEW.id);
  PERFORM pg_notify('api_clients_changed', 'created:' || NEW.id::text);
  RETURN NULL;
END;
$$;
