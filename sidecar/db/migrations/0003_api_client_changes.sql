-- Every sidecar LISTENs on api_clients_changed (common/contract.ts CLIENT_CHANGES_CHANNEL) and
-- invalidates its nginx's cached decisions about the row id it receives. Only changes that
-- alter a decision notify: a deleted client, or a new name, admin flag, api_client_id or key.
CREATE FUNCTION api_clients_notify_change() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('api_clients_changed', OLD.id::text);
  RETURN NULL;
END;
$$;

CREATE TRIGGER api_clients_deleted
  AFTER DELETE ON api_clients
  FOR EACH ROW EXECUTE FUNCTION api_clients_notify_change();

CREATE TRIGGER api_clients_updated
  AFTER UPDATE ON api_clients
  FOR EACH ROW
  WHEN (
    OLD.name IS DISTINCT FROM NEW.name
    OR OLD.is_admin IS DISTINCT FROM NEW.is_admin
    OR OLD.api_client_id IS DISTINCT FROM NEW.api_client_id
    OR OLD.key_hash IS DISTINCT FROM NEW.key_hash
  )
  EXECUTE FUNCTION api_clients_notify_change();
