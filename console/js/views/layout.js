// The frame around every screen: title, navigation, who is signed in, sign-out.
import { html, nothing } from '../../vendor/lit-html.js';
import { credential } from '../session.js';

function navButton(app, screen, label) {
  return html`<button type="button" aria-current=${app.screen === screen ? 'page' : 'false'}
    @click=${() => app.go(screen)}>${label}</button>`;
}

/** The page: header (when signed in), the screen-wide message, then the screen. */
export function layout(app, screen) {
  const who = credential();
  const signedIn = who !== null && app.screen !== 'sign-in';
  return html`
    <header class="bar">
      <h1>Gateway console</h1>
      ${
        signedIn
          ? html`<nav aria-label="Sections">
                ${navButton(app, 'clients', 'API clients')} ${navButton(app, 'audit', 'Audit trail')}
              </nav>
              <span class="who">Signed in with ${who.label}</span>
              <button type="button" id="sign-out" @click=${() => app.signOut()}>Sign out</button>`
          : nothing
      }
    </header>
    <main>
      ${
        app.message
          ? html`<p id="message" class=${app.message.kind} role=${app.message.kind === 'error' ? 'alert' : 'status'}>
              ${app.message.text}</p>`
          : nothing
      }
      ${screen}
    </main>`;
}
