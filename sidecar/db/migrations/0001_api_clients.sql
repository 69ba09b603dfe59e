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
