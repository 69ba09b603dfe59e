import { createServer, type Server } from 'node:http';
import type pg from 'pg';
import { ApiKeyVerifier } from './auth/api-key-verifier.js';
import { createAuthHandler, sendJson } from './auth/auth-route.js';
import { Authenticator } from './auth/authenticator.js';
import type { BearerVerifier } from './auth/bearer-verifier.js';
import { ClientDirectory } from './clients/client-directory.js';
import { ClientStore } from './clients/client-store.js';
import { asciiJson, INTERNAL_ERROR_BODY } from './errors/api-error.js';
import type { Logger } from './log.js';
import { createManagementApp } from './management/app.js';

export interface SidecarParts {
  pool: pg.Pool;
  log: Logger;
  /** Builds the bearer-token verifier over the same client directory as API keys. */
  bearer?: ((clients: ClientDirectory) => BearerVerifier) | null;
}

/** The sidecar's HTTP server: `/auth` on plain node:http, the rest through Express. */
export function createSidecarServer({ pool, log, bearer = null }: SidecarParts): Server {
  const store = new ClientStore(pool);
  const directory = new ClientDirectory(store);
  const authenticator = new Authenticator(
    new ApiKeyVerifier(directory),
    bearer?.(directory) ?? null,
  );
  const auth = createAuthHandler(authenticator, log);
  const management = createManagementApp(store, authenticator, log);

  const server = createServer((req, res) => {
    const url = req.url ?? '';
    if (url === '/auth' || url.startsWith('/auth?')) {
      auth(req, res).catch((err: unknown) => {
        log.error('unexpected error in /auth', { error: (err as Error).message });
        if (!res.headersSent) sendJson(res, 500, asciiJson(INTERNAL_ERROR_BODY), {});
        else res.destroy();
      });
      return;
    }
    if (url === '/healthz') {
      pool.query('SELECT 1').then(
        () => sendJson(res, 200, '{"status":"ok"}', {}),
        () => sendJson(res, 503, '{"status":"database unreachable"}', {}),
      );
      return;
    }
    management(req, res);
  });
  // nginx keeps upstream connections open for up to 60 s; closing them first from this side
  // would race with nginx reusing them and surface as 502s.
  server.keepAliveTimeout = 75_000;
  server.headersTimeout = 76_000;
  server.requestTimeout = 30_000;
  return server;
}
