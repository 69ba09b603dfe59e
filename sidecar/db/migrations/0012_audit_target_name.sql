-- The target client's name as it was when the event was recorded, written with the event: the
-- audit trail then names a client that has since been renamed or deleted without a look-up per
-- event (the console's audit view read one client per target, and got 404 for deleted ones).
-- Older events keep NULL: their names at the time are not known, and today's name could be a
-- different one. Nullable without a default: PostgreSQL adds it without rewriting the table.
ALTER TABLE audit_events ADD COLUMN target_name text;
