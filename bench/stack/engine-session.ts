import { http } from '../../test/support/http.js';

/**
 * The path every load row requests: the engine's "current session" call with a logged-in
 * session cookie. Cheap (a map look-up and a 170-byte JSON), the same bytes through the
 * baseline and the gateway, and a 200 only when the request really reached the engine: wrk
 * counts every answer > 399 as an error, so a run where the gateway refused anything (401,
 * 503) is caught rather than measured as fast refusals.
 */
export const BENCH_PATH = '/resources/json/service/session';

const SESSION_BODY = {
  type: 'APISession',
  version: { type: 'APIVersion', major: 2, minor: 1, micro: 0 },
};

async function post(
  socketPath: string,
  path: string,
  json: unknown,
  cookie?: string,
): Promise<{ status: number; cookie: string | undefined; text: string }> {
  const res = await http(`http://localhost${path}`, {
    method: 'POST',
    socketPath,
    json,
    headers: cookie ? { Cookie: cookie } : {},
  });
  const set = res.headers['set-cookie'];
  const first = Array.isArray(set) ? set[0] : set;
  return { status: res.status, cookie: first?.split(';', 1)[0], text: res.text };
}

/**
 * Opens an engine session and logs it in as the engine administrator, straight on the
 * engine's unix socket (set-up, not measured); returns the `Cookie` header value.
 */
export async function engineSessionCookie(appSocket: string, password: string): Promise<string> {
  const opened = await post(appSocket, '/resources/json/service/session', SESSION_BODY);
  if (opened.status !== 200 || !opened.cookie) {
    throw new Error(`engine session: ${opened.status} ${opened.text}`);
  }
  const login = await post(
    appSocket,
    '/resources/json/service/login',
    { type: 'LoginRequest', username: 'admin', password, target: 'SYSTEM' },
    opened.cookie,
  );
  if (login.status !== 200 || !login.cookie) {
    throw new Error(`engine login: ${login.status} ${login.text}`);
  }
  return login.cookie;
}
