-- API clients: callers of the gateway. The key secret is never stored, only its SHA-256.
CREATE TABLE api_clients (
  id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  name          text        NOT NULL,
  is_admin      boolean     NOT NULL,
  api_client_id text,
  key_hash      bytea,
  created_at    timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT api_clients_name_key UNIQUE (name),
  CONSTRAINT api_clients_api_client_id_key UNIQUE (api_client_id),
  CONSTRAINT api_clients_key_hash_length CHECK (key_hash IS NULL OR octet_length(key_hash) = 32),
  CONSTRAINT api_clients_has_a_credential CHECK (key_hash IS NOT NULL OR api_client_id IS NOT NULL)
);

-- Every change is announced, so every sidecar on this database drops what it cached about
-- that client at once (revocation). A trigger catches changes made outside the sidecar too.
CREATE FUNCTION api_clients_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' THEN
    PERFORM pg_notify('api_clients_changed', OLD.id::text);
    RETURN OLD;
  END IF;
  PERFORM pg_notify('api_clients_changed', NEW.id::text);
  IF TG_OP = 'UPDATE' AND OLD.id <> NEW.id THEN
    PERFORM pg_notify('api_clients_changed', OLD.id::text);
  END IF;
  RETURN NEW;
END;
$$;

CREATE TRIGGER api_clients_changed
  AFTER INSERT OR UPDATE OR DELETE ON api_clients
  FOR EACH ROW EXECUTE FUNCTION api_clients_notify();

-- TRUNCATE skips row triggers; announce it as "everything changed".
CREATE FUNCTION api_clients_notify_truncate() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('api_clients_changed', '*');
  RETURN NULL;
END;
$$;

CREATE TRIGGER api_clients_truncated
  AFTER TRUNCATE ON api_clients
  FOR EACH STATEMENT EXECUTE FUNCTION api_clients_notify_truncate();
