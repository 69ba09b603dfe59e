import express, { type Express } from 'express';
import type { Authenticator } from '../auth/authenticator.js';
import type { ClientStore } from '../clients/client-store.js';
import { NotFoundError } from '../errors/api-error.js';
import { errorMiddleware } from '../errors/error-middleware.js';
import type { Logger } from '../log.js';
import type { DecisionInvalidator } from '../revocation/nginx-control.js';
import { apiClientsRouter } from './api-clients-routes.js';
import { requestLog } from './request-log.js';

/** The management API (everything but `/auth`), as an Express application. */
export function createManagementApp(
  store: ClientStore,
  authenticator: Authenticator,
  invalidator: DecisionInvalidator,
  log: Logger,
): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.use(requestLog(log));
  app.use(apiClientsRouter(store, authenticator, invalidator, log));
  app.use(() => {
    throw new NotFoundError();
  });
  app.use(errorMiddleware(log));
  return app;
}
