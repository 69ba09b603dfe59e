// The console's entry point: reads its settings, completes an OpenID Connect return, and
// renders one screen at a time. Every server value reaches the page through lit-html's
// text bindings, never as markup.
import { render } from '../vendor/lit-html.js';
import { ApiError } from './api.js';
import { completeSignIn } from './oidc.js';
import * as session from './session.js';
import { auditScreen, loadAudit } from './views/audit.js';
import { detailScreen, loadDetail } from './views/client-detail.js';
import { clientsScreen } from './views/clients.js';
import { loadClients } from './views/clients-load.js';
import { layout } from './views/layout.js';
import { signInScreen } from './views/sign-in.js';

const root = document.getElementById('app');
const NEW_AUDIT = {
  action: '',
  actor: '',
  target: '',
  since: '',
  until: '',
  limit: 50,
  cursor: null,
  page: null,
};

/** What every view reads and calls: the settings, the state, and the few transitions. */
const app = {
  config: { api_keys: false, oidc: null },
  screen: 'sign-in',
  /** A message for the whole screen: `{kind: 'error'|'notice', text}` or null. */
  message: null,
  clients: { sort: 'id', limit: 25, cursor: null, filter: '', page: null, panel: null },
  audit: { ...NEW_AUDIT },
  /** The client whose detail screen is open. */
  detail: null,
  update() {
    render(layout(app, screenOf(app)), root);
  },
  /** Shows another screen and loads its data. */
  async go(screen) {
    app.screen = screen;
    app.message = null;
    app.update();
    if (screen === 'clients') await loadClients(app);
    if (screen === 'audit') await loadAudit(app);
    if (screen === 'detail') await loadDetail(app);
    const heading = root.querySelector('h2');
    if (heading) heading.focus();
  },
  /** Handles a failed call no form can place: 401 signs out, 403 names what is missing. */
  fail(err) {
    if (err instanceof ApiError && err.status === 401) {
      session.clear();
      app.screen = 'sign-in';
      app.message = { kind: 'error', text: 'The gateway refused the credential: sign in again.' };
    } else if (err instanceof ApiError && err.status === 403) {
      app.message = { kind: 'error', text: 'An admin credential is needed for this.' };
    } else {
      app.message = { kind: 'error', text: err instanceof Error ? err.message : String(err) };
    }
    app.update();
  },
  /** Opens the detail screen of client `id`. */
  openClient(id) {
    app.detail = {
      id,
      step: 'hour',
      client: null,
      usage: null,
      events: [],
      limitError: null,
      permissions: null,
    };
    return app.go('detail');
  },
  signOut() {
    session.clear();
    app.clients = { sort: 'id', limit: 25, cursor: null, filter: '', page: null, panel: null };
    app.audit = { ...NEW_AUDIT };
    app.detail = null;
    app.screen = 'sign-in';
    app.message = { kind: 'notice', text: 'Signed out.' };
    app.update();
  },
};

function screenOf(a) {
  if (a.screen === 'clients') return clientsScreen(a);
  if (a.screen === 'audit') return auditScreen(a);
  if (a.screen === 'detail' && a.detail) return detailScreen(a);
  return signInScreen(a);
}

const CONFIG_ATTEMPTS = 3;

/**
 * The console's settings (config.json). A failed read is asked again: a browser aborts its
 * fetches when the machine's network interfaces change (ERR_NETWORK_CHANGED), and a gateway
 * restarting answers nothing for a moment. A 4xx is an answer, not asked again. Without its
 * settings the console still offers key sign-in, the API decides, and it says why.
 */
async function readConfig() {
  let problem = '';
  for (let attempt = 1; attempt <= CONFIG_ATTEMPTS; attempt += 1) {
    if (attempt > 1) await new Promise((resolve) => setTimeout(resolve, 250 * attempt));
    try {
      const res = await fetch('/console/config.json', { credentials: 'omit', cache: 'no-store' });
      if (res.ok) return await res.json();
      problem = `HTTP ${res.status}`;
      if (res.status < 500) break;
    } catch (err) {
      problem = err instanceof Error ? err.message : String(err);
    }
  }
  app.message = {
    kind: 'error',
    text: `The console could not read its settings (${problem}): only key sign-in is offered. Reload to try again.`,
  };
  return { api_keys: true, oidc: null };
}

async function start() {
  // lit-html renders beside what is there: the static "Loading" text goes first.
  root.replaceChildren();
  app.config = await readConfig();
  try {
    if (app.config.oidc && (await completeSignIn(app.config.oidc))) {
      await app.go('clients');
      return;
    }
  } catch (err) {
    app.message = { kind: 'error', text: err.message };
  }
  if (session.credential() !== null) await app.go('clients');
  else app.update();
}

start();
