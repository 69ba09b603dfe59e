-- Per-client permissions (issue 39, docs/decisions/20261128-permissions.md): NULL, every
-- client's value until changed, lets the client call everything; a JSON list of rules
-- {"methods": [...], "path": "<pattern>"} lets it call only what a rule allows. The sidecar
-- validates the rules (common/permissions.ts) before it writes them. Nullable without a
-- default: no table rewrite, whatever the size of the table.
ALTER TABLE api_clients ADD COLUMN permissions jsonb;
-- NOT VALID: every existing row holds NULL, so there is nothing to check; validating would scan
-- the table under its exclusive lock.
ALTER TABLE api_clients
  ADD CONSTRAINT api_clients_permissions CHECK (
    permissions IS NULL OR jsonb_typeof(permissions) = 'array'
  ) NOT VALID;

-- 0008's trigger, widened: nginx keeps the rules with the key record and the decision, so a
-- change must reach every gateway like a revocation (and be a position in the change feed).
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
    OR OLD.rate_limit_requests IS DISTINCT FROM NEW.rate_limit_requests
    OR OLD.rate_limit_per_seconds IS DISTINCT FROM NEW.rate_limit_per_seconds
    OR OLD.permissions IS DISTINCT FROM NEW.permissions
  )
  EXECUTE FUNCTION api_clients_notify_change();
