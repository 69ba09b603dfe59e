import { createServer } from 'node:http';
import { pathToFileURL } from 'node:url';

/**
 * The application: it trusts the gateway in front of it and answers with the caller's
 * identity, which the gateway sends as X-Client-Id, X-Client-Name (percent-encoded UTF-8) and
 * X-Client-Is-Admin. It never sees the caller's key.
 */
export function createApp() {
  return createServer((req, res) => {
    const name = req.headers['x-client-name'];
    res.setHeader('Content-Type', 'application/json');
    res.end(
      JSON.stringify({
        path: req.url,
        clientId: req.headers['x-client-id'] ?? null,
        clientName: typeof name === 'string' ? decodeURIComponent(name) : null,
        isAdmin: req.headers['x-client-is-admin'] === 'true',
        sawAuthorization: req.headers.authorization !== undefined,
      }),
    );
  });
}

// `npm start`: listen on PORT (default 3000).
if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  createApp().listen(Number(process.env.PORT ?? 3000));
}
