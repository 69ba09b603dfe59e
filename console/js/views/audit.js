// The audit trail (GET /v1/management/audit-events): newest first, filtered by action, actor,
// target and time, paged forwards through cursors: one request per page. Each event names its
// target as it was when the event was recorded (a deleted client's too); older events, written
// before names were kept, show the id.
import { html, nothing } from '../../vendor/lit-html.js';
import { ApiError, call, query } from '../api.js';
import { formErrors, textField, toLocalInput, toRfc3339 } from './fields.js';
import { when } from './time.js';

const ACTIONS = [
  'api_client.create',
  'api_client.update',
  'api_client.delete',
  'api_client.rotate',
  'bootstrap_key.issue',
  'bootstrap_key.refuse',
  'settings.update',
];

/** Loads the page the state names (filters, limit, cursor). */
export async function loadAudit(app) {
  const s = app.audit;
  try {
    s.page = await call(
      'GET',
      `/audit-events${query({
        action: s.action,
        actor: s.actor,
        target: s.target,
        since: s.since,
        until: s.until,
        limit: s.limit,
        cursor: s.cursor,
      })}`,
    );
    s.error = null;
  } catch (err) {
    if (err instanceof ApiError && err.status === 400) {
      // A filter the API refused: said next to it.
      s.error = err;
      app.update();
      return;
    }
    app.fail(err);
    return;
  }
  app.update();
}

async function change(app, changes) {
  app.message = null;
  Object.assign(app.audit, changes);
  await loadAudit(app);
}

function target(event) {
  const id = event.target_id;
  if (id === null || id === undefined) return '—';
  return event.target_name ? `${event.target_name} (#${id})` : `#${id}`;
}

const FILTERS = ['actor', 'target', 'since', 'until'];

function filters(app, s) {
  const onSubmit = (event) => {
    event.preventDefault();
    const f = new FormData(event.target);
    const text = (name) => String(f.get(name) ?? '').trim();
    change(app, {
      actor: text('actor'),
      target: text('target'),
      since: toRfc3339(text('since')) ?? '',
      until: toRfc3339(text('until')) ?? '',
      cursor: null,
    });
  };
  const error = s.error ?? null;
  return html`<form class="toolbar" id="audit-filters" @submit=${onSubmit}>
    ${textField({ form: 'audit', name: 'actor', label: 'Done by client id', value: s.actor, type: 'number', min: 1, error })}
    ${textField({ form: 'audit', name: 'target', label: 'About client id', value: s.target, type: 'number', min: 1, error })}
    ${textField({ form: 'audit', name: 'since', label: 'From (local time)', type: 'datetime-local', value: toLocalInput(s.since), error })}
    ${textField({ form: 'audit', name: 'until', label: 'To (local time)', type: 'datetime-local', value: toLocalInput(s.until), error })}
    <button type="submit" id="audit-apply">Apply the filters</button>
    ${formErrors(error, FILTERS)}
  </form>`;
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
    ${filters(app, s)}
    <table>
      <caption class="visually-hidden">Audit events, newest first</caption>
      <thead><tr>
        <th scope="col">Time</th><th scope="col">Action</th><th scope="col">Outcome</th>
        <th scope="col">Actor</th><th scope="col">Target</th><th scope="col">Source</th>
        <th scope="col">Request id</th>
      </tr></thead>
      <tbody>${items.map(
        (e) => html`<tr data-action=${e.action}>
          <td>${when(e.time)}</td>
          <td>${e.action}</td>
          <td>${e.outcome}</td>
          <td>${actor(e)}</td>
          <td class="name" title=${target(e)}>${target(e)}</td>
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
