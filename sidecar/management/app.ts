import express, { type Express } from 'express';
import { auditRouter } from '../audit/audit-routes.js';
import type { Authenticator } from '../auth/authenticator.js';
import { requireAdmin } from '../auth/require-admin.js';
import { type ApiClientRouteParts, apiClientsRouter } from '../clients/routes/router.js';
import type { Queryable } from '../db/queryable.js';
import { NotFoundError } from '../errors/api-error.js';
import { errorMiddleware } from '../errors/error-middleware.js';
import { noStore, requestLog } from '../http/middleware.js';
import type { SettingsRepository } from '../settings/settings.js';
import { settingsRouter } from '../settings/settings-routes.js';
import { usageRouter } from '../usage/usage-routes.js';
import { openApiRouter } from './openapi-routes.js';

/** What the management routes work with: the API client routes' parts and the rest. */
export interface ManagementParts extends ApiClientRouteParts {
  authenticator: Authenticator;
  /** Where the audit trail and the failure counts are read (management's pool). */
  auditDb: Queryable;
  /** The gateway-wide settings (the bootstrap lock); a change commits with its audit event. */
  settings: SettingsRepository;
}

/** The management API (everything but `/auth`), as an Express application. */
export function createManagementApp(parts: ManagementParts): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.use(noStore);
  app.use(requestLog(parts.log));
  // Everything under /v1/management needs an admin, even paths that do not exist, and the
  // OpenAPI document too (decision 20261123-openapi-document).
  app.use('/v1/management', requireAdmin(parts.authenticator));
  app.use(apiClientsRouter(parts));
  app.use(usageRouter(parts.store, parts.auditDb, parts.clock));
  app.use(auditRouter(parts.auditDb));
  app.use(settingsRouter(parts.settings));
  app.use(openApiRouter());
  app.use(() => {
    throw new NotFoundError();
  });
  app.use(errorMiddleware(parts.log));
  return app;
}
