-- A new client is announced too: nginx remembers key ids that no client had (so a flood of
-- guesses is answered without asking), and a create must end that for its id at once, on
-- every gateway (docs/decisions/20261125-miss-path.md).
CREATE FUNCTION api_clients_notify_created() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('api_clients_changed', NEW.id::text);
  RETURN NULL;
END;
$$;

CREATE TRIGGER api_clients_created
  AFTER INSERT ON api_clients
  FOR EACH ROW EXECUTE FUNCTION api_clients_notify_created();
