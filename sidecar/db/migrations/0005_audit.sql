-- The audit trail (issue 12): one row per management action, written in the transaction of
-- the change it records. Never a secret, a key or a hash: only ids, names and outcomes.
CREATE TABLE audit_events (
  id                bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  time              timestamptz NOT NULL DEFAULT now(),
  action            text        NOT NULL,
  outcome           text        NOT NULL,
  actor_id          bigint,
  actor_name        text,
  actor_auth_method text        NOT NULL,
  target_id         bigint,
  request_id        text,
  source_address    text,
  details           jsonb       NOT NULL DEFAULT '{}',
  CONSTRAINT audit_events_outcome CHECK (outcome IN ('success', 'failure')),
  CONSTRAINT audit_events_auth_method CHECK (actor_auth_method IN ('api_key', 'bearer', 'bootstrap'))
);
-- Newest first is id descending (the primary key); each filter has an index that serves that
-- order within it. No foreign keys: an event outlives the client it names.
CREATE INDEX audit_events_action ON audit_events (action, id);
CREATE INDEX audit_events_actor ON audit_events (actor_id, id);
CREATE INDEX audit_events_target ON audit_events (target_id, id);
CREATE INDEX audit_events_time ON audit_events (time, id);

-- Failed authentications, counted per client, reason and minute by each sidecar in memory and
-- added here every few seconds: a flood of bad requests changes counts, it adds no rows.
CREATE TABLE auth_failures (
  id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  api_key_id   bigint,
  reason       text        NOT NULL,
  window_start timestamptz NOT NULL,
  count        bigint      NOT NULL
);
-- COALESCE: the failures that named no client (NULL) share one row per reason and minute.
CREATE UNIQUE INDEX auth_failures_window
  ON auth_failures (window_start, reason, (COALESCE(api_key_id, 0)));
CREATE INDEX auth_failures_newest ON auth_failures (window_start DESC, id DESC);
