// Sign-in: an admin API key pasted here (kept in sessionStorage), or OpenID Connect.
import { html, nothing } from '../../vendor/lit-html.js';
import { ApiError, call } from '../api.js';
import { beginSignIn } from '../oidc.js';
import * as session from '../session.js';

async function withKey(app, event) {
  event.preventDefault();
  const key = new FormData(event.target).get('api-key');
  if (typeof key !== 'string' || key.trim() === '') {
    app.message = { kind: 'error', text: 'Paste an admin API key.' };
    app.update();
    return;
  }
  session.useApiKey(key);
  try {
    // The cheapest admin-only call: it proves the key is an admin's before the console opens.
    await call('GET', '/api-clients?limit=1');
  } catch (err) {
    session.clear();
    const text =
      err instanceof ApiError && err.status === 403
        ? 'An admin credential is needed: this key belongs to a client that is not an admin.'
        : err instanceof ApiError && err.status === 401
          ? 'The gateway refused this key.'
          : err.message;
    app.message = { kind: 'error', text };
    app.update();
    return;
  }
  event.target.reset();
  await app.go('clients');
}

async function withProvider(app) {
  try {
    await beginSignIn(app.config.oidc);
  } catch (err) {
    app.message = { kind: 'error', text: err.message };
    app.update();
  }
}

/** The sign-in screen, offering the methods default.conf has on. */
export function signInScreen(app) {
  const { api_keys: keys, oidc } = app.config;
  return html`
    <h2 tabindex="-1">Sign in</h2>
    ${
      keys
        ? html`<form class="stack panel" id="key-sign-in" @submit=${(e) => withKey(app, e)}>
            <div class="field">
              <label for="api-key">Admin API key</label>
              <input id="api-key" name="api-key" type="password" autocomplete="off"
                spellcheck="false" required aria-describedby="api-key-hint">
              <span class="hint" id="api-key-hint">Kept in this tab only (sessionStorage): gone
                when the tab closes.</span>
            </div>
            <div><button class="primary" type="submit">Sign in with the key</button></div>
          </form>`
        : nothing
    }
    ${
      oidc
        ? html`<section class="panel">
            <p>Sign in through your OpenID Connect provider.</p>
            <div><button class="primary" type="button" id="oidc-sign-in"
              @click=${() => withProvider(app)}>Sign in with OpenID Connect</button></div>
          </section>`
        : nothing
    }
    ${!keys && !oidc ? html`<p class="error">No sign-in method is configured for the console.</p>` : nothing}`;
}
