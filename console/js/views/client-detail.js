// One API client: its record (created, expiry, when an old key's grace ends), its usage chart
// (GET .../usage), its rate limit (editable: PUT rate_limit), its permissions (editable: PUT
// permissions, permissions.js) and its recent audit events.
import { html, nothing } from '../../vendor/lit-html.js';
import { call, query } from '../api.js';
import { formErrors, formFailure, textField } from './fields.js';
import { permissionsDraft, permissionsForm, permissionsInForce } from './permissions.js';
import { when } from './time.js';
import { usageChart } from './usage-chart.js';

const STEPS = [
  ['minute', 'Per minute, the last hour'],
  ['hour', 'Per hour, the last day'],
  ['day', 'Per day, the last 30 days'],
];

/** Loads the client, its usage at the chosen step and its latest audit events, at once. */
export async function loadDetail(app) {
  const d = app.detail;
  try {
    const [client, usage, events] = await Promise.all([
      call('GET', `/api-clients/${d.id}`),
      call('GET', `/api-clients/${d.id}/usage${query({ step: d.step })}`),
      call('GET', `/audit-events${query({ target: d.id, limit: 10 })}`),
    ]);
    Object.assign(d, { client, usage, events: events.items });
    // The rules being edited survive a reload of the chart; a save starts them afresh.
    d.permissions ??= permissionsDraft(client.permissions ?? null);
  } catch (err) {
    app.fail(err);
    return;
  }
  app.update();
}

function limitForm(app, d) {
  const c = d.client;
  const onSubmit = async (event) => {
    event.preventDefault();
    app.message = null;
    const f = new FormData(event.target);
    const requests = String(f.get('rate_limit.requests') ?? '').trim();
    const per = String(f.get('rate_limit.per_seconds') ?? '').trim();
    // Both empty: no limit. Anything else is the API's to judge, field by field.
    const rateLimit =
      requests === '' && per === ''
        ? null
        : { requests: Number(requests || Number.NaN), per_seconds: Number(per || Number.NaN) };
    try {
      await call('PUT', `/api-clients/${c.id}`, { rate_limit: rateLimit });
    } catch (err) {
      formFailure(
        app,
        err,
        (e) => {
          d.limitError = e;
        },
        '#panel-limit',
      );
      return;
    }
    d.limitError = null;
    app.message = {
      kind: 'notice',
      text: rateLimit
        ? `Saved: at most ${rateLimit.requests} requests per ${rateLimit.per_seconds} s on each gateway pair.`
        : 'Saved: no rate limit.',
    };
    await loadDetail(app);
  };
  const limit = c.rate_limit;
  return html`<form class="panel stack" id="panel-limit" aria-labelledby="limit-title" @submit=${onSubmit}>
    <h3 id="limit-title">Rate limit</h3>
    <p class="hint">Counted by each gateway pair on its own. Both fields empty: no limit.</p>
    <div class="toolbar">
      ${textField({ form: 'limit', name: 'rate_limit.requests', label: 'Requests', type: 'number', min: 1, value: limit ? String(limit.requests) : '', error: d.limitError })}
      ${textField({ form: 'limit', name: 'rate_limit.per_seconds', label: 'Per seconds', type: 'number', min: 1, max: 86400, value: limit ? String(limit.per_seconds) : '', error: d.limitError })}
    </div>
    ${formErrors(d.limitError, ['rate_limit.requests', 'rate_limit.per_seconds'])}
    <div class="toolbar"><button class="primary" type="submit" id="save-limit">Save the limit</button></div>
  </form>`;
}

function facts(c) {
  const limit = c.rate_limit;
  return html`<dl class="facts">
    <dt>Id</dt><dd>${c.id}</dd>
    <dt>Role</dt><dd>${c.is_admin ? 'admin' : 'client'}</dd>
    <dt>OIDC client id</dt><dd>${c.api_client_id ?? '—'}</dd>
    <dt>API key</dt><dd>${c.has_api_key ? 'yes' : 'no'}</dd>
    <dt>Created</dt><dd id="detail-created">${when(c.created_at)}</dd>
    <dt>Expires</dt><dd>${c.expires_at ? when(c.expires_at) : 'never'}</dd>
    <dt>Last used</dt><dd>${when(c.last_used_at)}</dd>
    <dt>Old key accepted until</dt><dd id="detail-grace">${c.previous_key_expires_at ? when(c.previous_key_expires_at) : '— (no grace period running)'}</dd>
    <dt>Rate limit</dt><dd id="detail-limit">${limit ? `${limit.requests} per ${limit.per_seconds} s` : 'none'}</dd>
    <dt>Permissions</dt><dd>${permissionsInForce(c.permissions)}</dd>
  </dl>`;
}

function events(d) {
  if (d.events.length === 0) return html`<p class="hint">No audit event names this client.</p>`;
  return html`<table id="detail-events">
    <caption class="visually-hidden">The latest audit events about this client</caption>
    <thead><tr><th scope="col">Time</th><th scope="col">Action</th><th scope="col">Outcome</th><th scope="col">By</th></tr></thead>
    <tbody>${d.events.map(
      (
        e,
      ) => html`<tr data-action=${e.action}><td>${when(e.time)}</td><td>${e.action}</td><td>${e.outcome}</td>
        <td>${e.actor?.name ?? (e.actor?.api_key_id ? `#${e.actor.api_key_id}` : '—')}</td></tr>`,
    )}</tbody>
  </table>`;
}

/** The detail screen of the client `app.detail.id`. */
export function detailScreen(app) {
  const d = app.detail;
  const c = d.client;
  return html`
    <h2 tabindex="-1" class="truncate" title=${c?.name ?? ''}>${c ? c.name : 'API client'}</h2>
    <div class="toolbar"><button type="button" id="back-to-clients" @click=${() => app.go('clients')}>Back to the API clients</button></div>
    ${
      c
        ? html`${facts(c)}
          <section aria-labelledby="usage-title">
            <div class="toolbar">
              <h3 id="usage-title">Usage</h3>
              <div class="field">
                <label for="usage-step">Show</label>
                <select id="usage-step" @change=${(e) => {
                  d.step = e.target.value;
                  app.message = null;
                  loadDetail(app);
                }}>
                  ${STEPS.map(([value, text]) => html`<option value=${value} ?selected=${d.step === value}>${text}</option>`)}
                </select>
              </div>
            </div>
            ${d.usage ? usageChart(d.usage) : nothing}
          </section>
          ${limitForm(app, d)}
          ${
            d.permissions
              ? permissionsForm(app, c, d.permissions, () => {
                  d.permissions = null;
                  return loadDetail(app);
                })
              : nothing
          }
          <section aria-labelledby="events-title">
            <h3 id="events-title">Recent audit events</h3>
            ${events(d)}
          </section>`
        : html`<p class="loading">Loading…</p>`
    }`;
}
