// Every data call of the console: the management API, with the operator's credential in the
// Authorization header and nowhere else (no cookie is sent: credentials 'omit').
import { authorization } from './session.js';

/** A management answer that was not 2xx: its status and the API's `errors` list. */
export class ApiError extends Error {
  constructor(status, errors) {
    super(errors.map((e) => e.message).join(' ') || `HTTP ${status}`);
    this.status = status;
    this.errors = errors;
  }

  /** The messages that concern one field of a form. */
  forField(field) {
    return this.errors.filter((e) => e.field === field).map((e) => e.message);
  }

  /** The messages that concern no field the form shows. */
  general(fields) {
    return this.errors.filter((e) => !fields.includes(e.field)).map((e) => e.message);
  }
}

const BASE = '/v1/management';

/** Calls `method path` with an optional JSON body; resolves to the parsed JSON answer. */
export async function call(method, path, body) {
  const headers = { Accept: 'application/json' };
  const auth = authorization();
  if (auth !== null) headers.Authorization = auth;
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  let res;
  try {
    res = await fetch(`${BASE}${path}`, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      credentials: 'omit',
      cache: 'no-store',
      redirect: 'error',
    });
  } catch {
    throw new ApiError(0, [{ code: 'NETWORK', message: 'The gateway cannot be reached.' }]);
  }
  const text = await res.text();
  let json = null;
  try {
    json = text === '' ? null : JSON.parse(text);
  } catch {
    json = null;
  }
  if (!res.ok) {
    const errors = Array.isArray(json?.errors)
      ? json.errors
      : [{ code: 'HTTP', message: `The gateway answered ${res.status}.` }];
    throw new ApiError(res.status, errors);
  }
  return json;
}

/** A query string from the non-empty values of `params`. */
export function query(params) {
  const q = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) {
    if (value !== undefined && value !== null && value !== '') q.set(name, String(value));
  }
  const text = q.toString();
  return text === '' ? '' : `?${text}`;
}
