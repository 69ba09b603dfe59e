import express, { type Express } from 'express';
import { errorHandler } from './http/error-handler.js';
import { mountRoutes } from './http/mount.js';
import { delphixNamespaceAlias } from './http/namespace-alias.js';
import type { RouteSpec } from './http/route.js';
import type { EngineState } from './state.js';

/** The engine's express application: `routes` served over `state`. */
export function createApp(
  state: EngineState,
  routes: readonly RouteSpec[],
  log: (line: string) => void,
): Express {
  const app = express();
  app.disable('x-powered-by');
  // Session-bound JSON must never be answered from a validator cache.
  app.disable('etag');
  app.set('query parser', 'simple');
  app.use(
    express.json({
      limit: state.settings.maxBodyBytes,
      strict: true,
      type: ['application/json', 'application/*+json'],
    }),
  );
  app.use((_req, res, next) => {
    res.set('X-Content-Type-Options', 'nosniff');
    next();
  });
  app.use(delphixNamespaceAlias);
  app.use(mountRoutes(routes, state));
  app.use(errorHandler(log));
  return app;
}
