-- Search by name (issue 22): the listing's `name` filter matches a case-insensitive prefix.
-- text_pattern_ops serves `lower(name) LIKE 'abc%'` whatever the database's collation, so a
-- search stays an index range scan at a million clients. A substring search would need pg_trgm,
-- an extension some managed databases do not let the gateway's user create.
CREATE INDEX api_clients_name_prefix ON api_clients (lower(name) text_pattern_ops);
