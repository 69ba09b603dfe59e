// The operator's credential, in sessionStorage only: gone when the tab closes, never in a
// cookie or localStorage, and sent nowhere but in the Authorization header (api.js).
const CREDENTIAL = 'gateway-console.credential';

/** The stored credential `{kind: 'api_key'|'bearer', value, label}`, or null. */
export function credential() {
  const text = sessionStorage.getItem(CREDENTIAL);
  if (text === null) return null;
  try {
    const parsed = JSON.parse(text);
    return typeof parsed?.value === 'string' ? parsed : null;
  } catch {
    return null;
  }
}

/** Keeps an API key (with or without its `apk ` prefix) for this tab. */
export function useApiKey(key) {
  const value = key.trim().replace(/^apk\s+/i, '');
  sessionStorage.setItem(CREDENTIAL, JSON.stringify({ kind: 'api_key', value, label: 'API key' }));
}

/** Keeps an access token from the OpenID Connect provider for this tab. */
export function useBearer(token) {
  sessionStorage.setItem(
    CREDENTIAL,
    JSON.stringify({ kind: 'bearer', value: token, label: 'OpenID Connect' }),
  );
}

/** The Authorization header value for the stored credential, or null. */
export function authorization() {
  const c = credential();
  if (c === null) return null;
  return c.kind === 'api_key' ? `apk ${c.value}` : `Bearer ${c.value}`;
}

/** Sign-out: everything this console kept, credential and sign-in state alike. */
export function clear() {
  sessionStorage.clear();
}
