import express, { type Express } from 'express';
import type { Authenticator } from '../auth/authenticator.js';
import type { ClientStore } from '../clients/client-store.js';
import { NotFoundError } from '../errors/api-error.js';
import { errorMiddleware } from '../errors/error-middleware.js';
import type { Logger } from '../log.js';
import type { DecisionInvalidator } from '../revocation/nginx-control.js';
import type { SettingsRepository } from '../settings/settings.js';
import { apiClientsRouter } from './api-clients-routes.js';
import { openApiRouter } from './openapi/openapi-routes.js';
import { requireAdmin } from './require-admin.js';
import { NO_SETTINGS_AUDIT, type SettingsAudit, settingsRouter } from './settings-routes.js';

/** The management API (everything but `/auth`), as an Express application. */
export function createManagementApp(
  store: ClientStore,
  authenticator: Authenticator,
  invalidator: DecisionInvalidator,
  log: Logger,
  settings: SettingsRepository,
  settingsAudit: SettingsAudit = NO_SETTINGS_AUDIT,
): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  // Everything under /v1/management needs an admin, even paths that do not exist, and the
  // OpenAPI document too (decision 20261123-openapi-document).
  app.use('/v1/management', requireAdmin(authenticator));
  app.use(apiClientsRouter(store, invalidator, log));
  app.use(settingsRouter(settings, settingsAudit));
  app.use(openApiRouter());
  app.use(() => {
    throw new NotFoundError();
  });
  app.use(errorMiddleware(log));
  return app;
}
