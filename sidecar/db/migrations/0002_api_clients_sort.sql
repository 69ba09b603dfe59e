-- Keyset pages by api_client_id: the listing orders by (is null, value or '', id), so an index on
-- exactly those expressions serves every page of that order. Ordering by name uses the unique
-- index on name; by id, the primary key.
CREATE INDEX api_clients_api_client_id_order
  ON api_clients ((api_client_id IS NULL), (COALESCE(api_client_id, '')), id);
