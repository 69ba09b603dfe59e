-- Per-client rate limits and usage (issue 22, docs/decisions/20261125-rate-limits-and-usage.md).
-- Two nullable columns without defaults: no table rewrite, whatever the size of the table.
ALTER TABLE api_clients
  ADD COLUMN rate_limit_requests    integer,
  ADD COLUMN rate_limit_per_seconds integer;
-- Both or neither, within what nginx enforces. NOT VALID: every existing row holds NULLs, so
-- there is nothing to check; validating would scan the table under its exclusive lock.
ALTER TABLE api_clients
  ADD CONSTRAINT api_clients_rate_limit CHECK (
    (rate_limit_requests IS NULL AND rate_limit_per_seconds IS NULL)
    OR (rate_limit_requests BETWEEN 1 AND 1000000000
        AND rate_limit_per_seconds BETWEEN 1 AND 86400)
  ) NOT VALID;

-- 0004's trigger, widened: nginx keeps the limit with the decision, so a new limit must drop
-- the decisions about the client, on every gateway, like a revocation.
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
  )
  EXECUTE FUNCTION api_clients_notify_change();

-- Requests per client and minute, counted by every nginx and added here by its sidecar (one
-- upsert per flush): allowed ones and those refused by the rate limit. Failed authentications
-- stay in auth_failures. No foreign key: like the audit trail, usage outlives its client until
-- the retention prunes it.
CREATE TABLE api_client_usage (
  api_key_id   bigint      NOT NULL,
  window_start timestamptz NOT NULL,
  allowed      bigint      NOT NULL DEFAULT 0,
  limited      bigint      NOT NULL DEFAULT 0,
  PRIMARY KEY (api_key_id, window_start)
);
-- Pruning walks the oldest rows first.
CREATE INDEX api_client_usage_window ON api_client_usage (window_start);
-- The usage endpoint reads a client's failed authentications by time.
CREATE INDEX auth_failures_client ON auth_failures (api_key_id, window_start);
