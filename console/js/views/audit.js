// The audit trail (GET /v1/management/audit-events): newest first, filtered by action, paged
// forwards through cursors.
import { html, nothing } from '../../vendor/lit-html.js';
import { call, query } from '../api.js';

const ACTIONS = [
  'api_client.create',
  'api_client.update',
  'api_client.delete',
  'api_client.rotate',
  'bootstrap_key.issue',
  'bootstrap_key.refuse',
  'settings.update',
];

/** Loads the page the state names (action filter, limit, cursor). */
export async function loadAudit(app) {
  const s = app.audit;
  try {
    const page = await call(
      'GET',
      `/audit-events${query({ action: s.action, limit: s.limit, cursor: s.cursor })}`,
    );
    s.page = page;
  } catch (err) {
    app.fail(err);
    return;
  }
  app.update();
}

async function change(app, changes) {
  Object.assign(app.audit, changes);
  await loadAudit(app);
}

function actor(event) {
  const a = event.actor ?? {};
  const who =
    a.name ?? (a.api_key_id === null || a.api_key_id === undefined ? '—' : `#${a.api_key_id}`);
  return `${who} (${a.auth_method ?? 'unknown'})`;
}

/** The audit trail screen. */
export function auditScreen(app) {
  const s = app.audit;
  const items = s.page?.items ?? [];
  const next = s.page?.response_metadata?.next_cursor ?? null;
  return html`
    <h2 tabindex="-1">Audit trail</h2>
    <div class="toolbar">
      <div class="field">
        <label for="audit-action">Action</label>
        <select id="audit-action" @change=${(e) => change(app, { action: e.target.value, cursor: null })}>
          <option value="" ?selected=${s.action === ''}>Every action</option>
          ${ACTIONS.map((a) => html`<option value=${a} ?selected=${s.action === a}>${a}</option>`)}
        </select>
      </div>
      <button type="button" id="audit-refresh" @click=${() => change(app, { cursor: null })}>Refresh</button>
    </div>
    <table>
      <caption class="visually-hidden">Audit events, newest first</caption>
      <thead><tr>
        <th scope="col">Time</th><th scope="col">Action</th><th scope="col">Outcome</th>
        <th scope="col">Actor</th><th scope="col">Target</th><th scope="col">Source</th>
        <th scope="col">Request id</th>
      </tr></thead>
      <tbody>${items.map(
        (e) => html`<tr data-action=${e.action}>
          <td>${new Date(e.time).toLocaleString()}</td>
          <td>${e.action}</td>
          <td>${e.outcome}</td>
          <td>${actor(e)}</td>
          <td>${e.target_id ?? '—'}</td>
          <td>${e.source_address ?? '—'}</td>
          <td>${e.request_id ?? '—'}</td>
        </tr>`,
      )}</tbody>
    </table>
    ${s.page && items.length === 0 ? html`<p class="hint">No event matches.</p>` : nothing}
    <div class="pager">
      <button type="button" id="audit-first" ?disabled=${s.cursor === null}
        @click=${() => change(app, { cursor: null })}>Newest</button>
      <button type="button" id="audit-next" ?disabled=${!next}
        @click=${() => change(app, { cursor: next })}>Older events</button>
    </div>`;
}
