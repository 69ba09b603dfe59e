-- Key lifecycle (issue 12): expiry, rotation with a grace period, last use.
-- New nullable columns without defaults: no table rewrite, whatever the size of the table.
ALTER TABLE api_clients
  ADD COLUMN expires_at              timestamptz,
  ADD COLUMN last_used_at            timestamptz,
  ADD COLUMN previous_key_hash       bytea,
  ADD COLUMN previous_key_expires_at timestamptz;
-- NOT VALID: every existing row holds NULL there, so there is nothing to check; validating
-- would scan the whole table under its exclusive lock. New and updated rows are checked.
ALTER TABLE api_clients
  ADD CONSTRAINT api_clients_previous_key_hash_length
  CHECK (previous_key_hash IS NULL OR octet_length(previous_key_hash) = 32) NOT VALID;

-- 0003's trigger, widened: a new expiry or a rotated-out secret changes decisions too. A new
-- last_used_at does not, and must not wake every sidecar (it is written once a minute per
-- client in use).
DROP TRIGGER api_clients_updated ON api_clients;
CREATE TRIGGER api_clients_updated
  AFTER UPDATE ON api_clients
  FOR EACH ROW
  WHEN (
    OLD.name IS DISTINCT FROM NEW.name
    OR OLD.is_admin IS DISTINCT FROM NEW.is_admin
    OR OLD.api_client_id IS DISTINCT FROM NEW.api_client_id
    OR OLD.key_hash IS DISTINCT FROM NEW.key_hash
    OR OLD.previous_key_hash IS DISTINCT FROM NEW.previous_key_hash
    OR OLD.previous_key_expires_at IS DISTINCT FROM NEW.previous_key_expires_at
    OR OLD.expires_at IS DISTINCT FROM NEW.expires_at
  )
  EXECUTE FUNCTION api_clients_notify_change();
