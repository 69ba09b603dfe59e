// OpenID Connect sign-in in the browser: authorization code with PKCE (RFC 7636, S256), the
// console being a public client (no secret). The provider returns to redirect_uri (default.conf;
// empty: the console's own address); the access token then authenticates management calls as
// a bearer token. The verifier and state live in sessionStorage for the round trip only.
import { useBearer } from './session.js';

const PENDING = 'gateway-console.oidc-pending';

function base64url(bytes) {
  let text = '';
  for (const b of new Uint8Array(bytes)) text += String.fromCharCode(b);
  return btoa(text).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

function randomText() {
  return base64url(crypto.getRandomValues(new Uint8Array(32)));
}

async function discover(discoveryUrl) {
  const res = await fetch(discoveryUrl, { credentials: 'omit', cache: 'no-store' });
  if (!res.ok) throw new Error(`The provider's discovery document answered ${res.status}.`);
  const doc = await res.json();
  if (typeof doc.authorization_endpoint !== 'string' || typeof doc.token_endpoint !== 'string') {
    throw new Error('The discovery document names no authorization or token endpoint.');
  }
  return doc;
}

/** Where the provider sends the browser back: the configured redirect_uri or this console. */
export function redirectUri(oidc) {
  return oidc.redirect_uri || new URL('/console/', location.origin).href;
}

/** Leaves for the provider's sign-in page. */
export async function beginSignIn(oidc) {
  const doc = await discover(oidc.discovery);
  const verifier = randomText();
  const state = randomText();
  const challenge = base64url(
    await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier)),
  );
  const redirect = redirectUri(oidc);
  sessionStorage.setItem(
    PENDING,
    JSON.stringify({ verifier, state, tokenEndpoint: doc.token_endpoint, redirect }),
  );
  const url = new URL(doc.authorization_endpoint);
  url.search = new URLSearchParams({
    response_type: 'code',
    client_id: oidc.client_id,
    redirect_uri: redirect,
    scope: oidc.scope,
    state,
    code_challenge: challenge,
    code_challenge_method: 'S256',
  }).toString();
  location.assign(url.href);
}

/**
 * Completes a sign-in when this page is the provider's return (code and state in the query):
 * resolves to true once a token is kept, false when there was nothing to complete; throws
 * with a readable message when the provider refused or the state does not match.
 */
export async function completeSignIn(oidc) {
  const params = new URLSearchParams(location.search);
  if (!params.has('state') || !(params.has('code') || params.has('error'))) return false;
  const pending = JSON.parse(sessionStorage.getItem(PENDING) ?? 'null');
  sessionStorage.removeItem(PENDING);
  // The code must not stay in the address bar or the history.
  history.replaceState(null, '', location.pathname);
  if (params.has('error')) {
    throw new Error(`The provider refused the sign-in: ${params.get('error')}.`);
  }
  if (pending === null || pending.state !== params.get('state')) {
    throw new Error('This sign-in was not started here (state mismatch): sign in again.');
  }
  const res = await fetch(pending.tokenEndpoint, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code: params.get('code') ?? '',
      redirect_uri: pending.redirect,
      client_id: oidc.client_id,
      code_verifier: pending.verifier,
    }).toString(),
    credentials: 'omit',
    cache: 'no-store',
  });
  const body = await res.json().catch(() => ({}));
  if (!res.ok || typeof body.access_token !== 'string') {
    throw new Error(`The provider gave no token (${body.error ?? res.status}).`);
  }
  useBearer(body.access_token);
  return true;
}
