// The panels of the API clients screen: create, edit, rotate (grace period), delete (with
// confirmation), and the new key, shown once with a copy button and a warning.
import { html, nothing } from '../../vendor/lit-html.js';
import { call } from '../api.js';
import { loadClients } from './clients-load.js';
import {
  checkField,
  formErrors,
  formFailure,
  textField,
  toLocalInput,
  toRfc3339,
} from './fields.js';
import { when } from './time.js';

const MAX_GRACE_SECONDS = 604800;

function close(app) {
  app.clients.panel = null;
  app.update();
  document.getElementById('new-client')?.focus();
}

/** Runs a panel's call; an API error stays on the panel (by field), 401/403 go to app.fail. */
async function submit(app, action) {
  const panel = app.clients.panel;
  // A notice about the last action is stale once the next one starts.
  app.message = null;
  app.update();
  try {
    await action(panel);
  } catch (err) {
    formFailure(app, err, (e) => {
      panel.error = e;
    });
    return;
  }
  await loadClients(app);
}

/** Escape closes a panel, as it closes a dialog. */
function onKey(app) {
  return (event) => {
    if (event.key === 'Escape') close(app);
  };
}

function showKey(app, title, token) {
  app.clients.panel = { kind: 'key', title, token, error: null };
}

function createPanel(app, p) {
  const onSubmit = (event) => {
    event.preventDefault();
    const f = new FormData(event.target);
    const apiClientId = String(f.get('api_client_id') ?? '').trim();
    const body = {
      name: String(f.get('name') ?? ''),
      is_admin: f.get('is_admin') === 'on',
      generate_api_key: f.get('generate_api_key') === 'on',
    };
    if (apiClientId !== '') body.api_client_id = apiClientId;
    const expires = toRfc3339(String(f.get('expires_at') ?? ''));
    if (expires !== null) body.expires_at = expires;
    return submit(app, async () => {
      const created = await call('POST', '/api-clients', body);
      if (created.token) showKey(app, `API key of ${body.name}`, created.token);
      else app.clients.panel = null;
      app.message = { kind: 'notice', text: `Created API client ${created.api_key_id}.` };
    });
  };
  const fields = ['name', 'is_admin', 'generate_api_key', 'api_client_id', 'expires_at'];
  return html`<form class="panel stack" id="panel-create" @keydown=${onKey(app)} aria-labelledby="create-title" @submit=${onSubmit}>
    <h3 id="create-title">New API client</h3>
    ${textField({ form: 'create', name: 'name', label: 'Name', required: true, error: p.error })}
    ${checkField({ form: 'create', name: 'is_admin', label: 'Admin (may use the management API)', error: p.error })}
    ${checkField({ form: 'create', name: 'generate_api_key', label: 'Generate an API key', checked: true, error: p.error })}
    ${textField({ form: 'create', name: 'api_client_id', label: 'OIDC client id (optional)', hint: 'The token claim that names this client.', error: p.error })}
    ${textField({ form: 'create', name: 'expires_at', label: 'Expires (optional)', type: 'datetime-local', error: p.error })}
    ${formErrors(p.error, fields)}
    <div class="toolbar"><button class="primary" type="submit">Create</button>
      <button type="button" @click=${() => close(app)}>Cancel</button></div>
  </form>`;
}

function editPanel(app, p) {
  const c = p.client;
  const onSubmit = (event) => {
    event.preventDefault();
    const f = new FormData(event.target);
    const apiClientId = String(f.get('api_client_id') ?? '').trim();
    const body = {
      name: String(f.get('name') ?? ''),
      is_admin: f.get('is_admin') === 'on',
      api_client_id: apiClientId === '' ? null : apiClientId,
    };
    // Sent only when changed: the minute-precision input would otherwise move the expiry.
    const expires = toRfc3339(String(f.get('expires_at') ?? ''));
    if (toLocalInput(expires) !== toLocalInput(c.expires_at)) body.expires_at = expires;
    return submit(app, async () => {
      await call('PUT', `/api-clients/${c.id}`, body);
      app.clients.panel = null;
      app.message = { kind: 'notice', text: `Saved API client ${c.id}.` };
    });
  };
  const fields = ['name', 'is_admin', 'api_client_id', 'expires_at'];
  return html`<form class="panel stack" id="panel-edit" @keydown=${onKey(app)} aria-labelledby="edit-title" @submit=${onSubmit}>
    <h3 id="edit-title">Edit API client ${c.id}</h3>
    ${textField({ form: 'edit', name: 'name', label: 'Name', value: c.name, required: true, error: p.error })}
    ${checkField({ form: 'edit', name: 'is_admin', label: 'Admin (may use the management API)', checked: c.is_admin, error: p.error })}
    ${textField({ form: 'edit', name: 'api_client_id', label: 'OIDC client id (optional)', value: c.api_client_id ?? '', error: p.error })}
    ${textField({ form: 'edit', name: 'expires_at', label: 'Expires (empty: never)', type: 'datetime-local', value: toLocalInput(c.expires_at), error: p.error })}
    ${formErrors(p.error, fields)}
    <div class="toolbar"><button class="primary" type="submit">Save</button>
      <button type="button" @click=${() => close(app)}>Cancel</button></div>
  </form>`;
}

function rotatePanel(app, p) {
  const c = p.client;
  const onSubmit = (event) => {
    event.preventDefault();
    const text = String(new FormData(event.target).get('grace_period_seconds') ?? '');
    const body = { grace_period_seconds: text === '' ? null : Number(text) };
    return submit(app, async () => {
      const rotated = await call('POST', `/api-clients/${c.id}/rotate`, body);
      showKey(app, `New API key of ${c.name}`, rotated.token);
      app.message = {
        kind: 'notice',
        text: rotated.previous_key_expires_at
          ? `Rotated. The previous key works until ${when(rotated.previous_key_expires_at)}.`
          : 'Rotated. The previous key is refused from now on.',
      };
    });
  };
  return html`<form class="panel stack" id="panel-rotate" @keydown=${onKey(app)} aria-labelledby="rotate-title" @submit=${onSubmit}>
    <h3 id="rotate-title">Rotate the key of ${c.name}</h3>
    ${textField({
      form: 'rotate',
      name: 'grace_period_seconds',
      label: 'Grace period of the current key, in seconds',
      type: 'number',
      value: '3600',
      min: 0,
      max: MAX_GRACE_SECONDS,
      required: true,
      hint: '0 refuses the current key at once; at most 604800 (7 days).',
      error: p.error,
    })}
    ${formErrors(p.error, ['grace_period_seconds'])}
    <div class="toolbar"><button class="primary" type="submit">Rotate</button>
      <button type="button" @click=${() => close(app)}>Cancel</button></div>
  </form>`;
}

function deletePanel(app, p) {
  const c = p.client;
  const onConfirm = () =>
    submit(app, async () => {
      await call('DELETE', `/api-clients/${c.id}`);
      app.clients.panel = null;
      app.message = { kind: 'notice', text: `Deleted API client ${c.id}.` };
    });
  return html`<section class="panel" id="panel-delete" @keydown=${onKey(app)} role="alertdialog" aria-labelledby="delete-title">
    <h3 id="delete-title">Delete ${c.name}?</h3>
    <p>Its key and tokens are refused at once. This cannot be undone.</p>
    ${formErrors(p.error, [])}
    <div class="toolbar"><button class="danger" type="button" id="confirm-delete" @click=${onConfirm}>Delete</button>
      <button type="button" @click=${() => close(app)}>Cancel</button></div>
  </section>`;
}

async function copy(token, event) {
  const button = event.target;
  try {
    await navigator.clipboard.writeText(token);
    button.textContent = 'Copied';
  } catch {
    // Without clipboard access: select it, so Ctrl+C copies it.
    document.getElementById('new-key')?.select();
    button.textContent = 'Press Ctrl+C to copy';
  }
}

function keyPanel(app, p) {
  return html`<section class="panel" id="panel-key" @keydown=${onKey(app)} aria-labelledby="key-title">
    <h3 id="key-title">${p.title}</h3>
    <p class="warning" role="alert">Copy this key now: it is shown only once and cannot be read again.</p>
    <label for="new-key">API key</label>
    <input id="new-key" class="key" type="text" readonly .value=${p.token}>
    <div class="toolbar"><button type="button" id="copy-key" @click=${(e) => copy(p.token, e)}>Copy</button>
      <button type="button" id="key-done" @click=${() => close(app)}>I have copied it</button></div>
  </section>`;
}

const PANELS = {
  create: createPanel,
  edit: editPanel,
  rotate: rotatePanel,
  delete: deletePanel,
  key: keyPanel,
};

/** The open panel of the clients screen, or nothing. */
export function clientPanel(app) {
  const p = app.clients.panel;
  return p ? PANELS[p.kind](app, p) : nothing;
}
