import { request } from 'node:http';

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

function post(
  socketPath: string,
  path: string,
  json: unknown,
  cookie?: string,
): Promise<{ status: number; cookie: string | undefined; text: string }> {
  const body = JSON.stringify(json);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        socketPath,
        path,
        method: 'POST',
        headers: {
          'Content-Type': 'application/json',
          'Content-Length': Buffer.byteLength(body),
          ...(cookie ? { Cookie: cookie } : {}),
        },
        timeout: 10_000,
      },
      (res) => {
        let text = '';
        res.on('data', (d: Buffer) => {
          text += d.toString('utf8');
        });
        res.on('end', () => {
          const set = res.headers['set-cookie']?.[0];
          resolve({ status: res.statusCode ?? 0, cookie: set?.split(';', 1)[0], text });
        });
      },
    );
    req.on('error', reject);
    req.on('timeout', () => req.destroy(new Error(`${path}: timeout`)));
    req.end(body);
  });
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
