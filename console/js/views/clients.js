// The API clients screen: sort, page through cursors, search by name (the API's `name`
// filter: a prefix, ignoring case, across all clients), and open the create, edit, rotate and
// delete panels (client-panels.js) or a client's detail view.
import { html, nothing } from '../../vendor/lit-html.js';
import { clientPanel } from './client-panels.js';
import { loadClients } from './clients-load.js';
import { when } from './time.js';

const SORTS = [
  ['id', 'Id, oldest first'],
  ['-id', 'Id, newest first'],
  ['name', 'Name, A to Z'],
  ['-name', 'Name, Z to A'],
  ['api_client_id', 'OIDC client id, A to Z'],
  ['-api_client_id', 'OIDC client id, Z to A'],
];

async function changeList(app, changes) {
  // A notice about the last action is stale once the next one starts.
  app.message = null;
  Object.assign(app.clients, changes);
  await loadClients(app);
}

function row(app, c) {
  const open = (kind) => {
    app.clients.panel = { kind, client: c, error: null };
    app.update();
    document.getElementById(`panel-${kind}`)?.querySelector('input, button')?.focus();
  };
  return html`<tr data-id=${c.id}>
    <td>${c.id}</td>
    <td class="name" title=${c.name}>${c.name}</td>
    <td>${c.is_admin ? 'admin' : '—'}</td>
    <td>${c.api_client_id ?? '—'}</td>
    <td>${c.has_api_key ? 'yes' : 'no'}</td>
    <td>${when(c.expires_at)}</td>
    <td>${when(c.last_used_at)}</td>
    <td class="actions">
      <button type="button" data-action="details" aria-label=${`Details of ${c.name}`} @click=${() => app.openClient(c.id)}>Details</button>
      <button type="button" data-action="edit" aria-label=${`Edit ${c.name}`} @click=${() => open('edit')}>Edit</button>
      ${
        c.has_api_key
          ? html`<button type="button" data-action="rotate" aria-label=${`Rotate the key of ${c.name}`}
              @click=${() => open('rotate')}>Rotate</button>`
          : nothing
      }
      <button type="button" class="danger" data-action="delete" aria-label=${`Delete ${c.name}`}
        @click=${() => open('delete')}>Delete</button>
    </td>
  </tr>`;
}

// The search waits for a pause in typing: one request per search, not per key.
const SEARCH_PAUSE_MS = 250;
let searchTimer = null;

function search(app, text) {
  app.clients.filter = text;
  clearTimeout(searchTimer);
  searchTimer = setTimeout(() => changeList(app, { cursor: null }), SEARCH_PAUSE_MS);
}

/** The API clients screen. */
export function clientsScreen(app) {
  const s = app.clients;
  const shown = s.page?.items ?? [];
  const meta = s.page?.response_metadata ?? {};
  return html`
    <h2 tabindex="-1">API clients</h2>
    <div class="toolbar">
      <button type="button" class="primary" id="new-client" @click=${() => {
        s.panel = { kind: 'create', client: null, error: null };
        app.update();
        document.getElementById('create-name')?.focus();
      }}>New API client</button>
      <div class="field">
        <label for="filter">Search by name (start of the name)</label>
        <input id="filter" type="search" .value=${s.filter} @input=${(e) => search(app, e.target.value)}>
      </div>
      <div class="field">
        <label for="sort">Sort by</label>
        <select id="sort" @change=${(e) => changeList(app, { sort: e.target.value, cursor: null })}>
          ${SORTS.map(([value, label]) => html`<option value=${value} ?selected=${s.sort === value}>${label}</option>`)}
        </select>
      </div>
      <div class="field">
        <label for="limit">Per page</label>
        <select id="limit" @change=${(e) => changeList(app, { limit: Number(e.target.value), cursor: null })}>
          ${[10, 25, 100, 1000].map((n) => html`<option value=${n} ?selected=${s.limit === n}>${n}</option>`)}
        </select>
      </div>
    </div>
    ${clientPanel(app)}
    <table>
      <caption class="visually-hidden">API clients, ${shown.length} shown of ${meta.total ?? 0}</caption>
      <thead><tr>
        <th scope="col">Id</th><th scope="col">Name</th><th scope="col">Role</th>
        <th scope="col">OIDC client id</th><th scope="col">Key</th><th scope="col">Expires</th>
        <th scope="col">Last used</th><th scope="col">Actions</th>
      </tr></thead>
      <tbody>${shown.map((c) => row(app, c))}</tbody>
    </table>
    ${s.page && shown.length === 0 ? html`<p class="hint">No API client matches.</p>` : nothing}
    <div class="pager">
      <button type="button" id="prev-page" ?disabled=${!meta.prev_cursor}
        @click=${() => changeList(app, { cursor: meta.prev_cursor })}>Previous page</button>
      <button type="button" id="next-page" ?disabled=${!meta.next_cursor}
        @click=${() => changeList(app, { cursor: meta.next_cursor })}>Next page</button>
      <span class="hint">${meta.total ?? 0} API clients${s.filter.trim() ? ' match' : ' in all'}</span>
    </div>`;
}
