// Loading the API clients list, apart from the screen (clients.js) and its panels
// (client-panels.js): both reload the list after a change, and neither imports the other back.
import { call, query } from '../api.js';

/** Loads the page the state names (sort, limit, cursor). */
export async function loadClients(app) {
  const s = app.clients;
  try {
    // A cursor carries its own order; sending sort with it is allowed only if equal.
    s.page = await call(
      'GET',
      `/api-clients${query({ sort: s.sort, limit: s.limit, cursor: s.cursor, name: s.filter.trim() })}`,
    );
  } catch (err) {
    app.fail(err);
    return;
  }
  app.update();
}
