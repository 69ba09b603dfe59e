import express, { type Express } from 'express';
import { auditRouter } from '../audit/audit-routes.js';
import { NotFoundError } from '../errors/api-error.js';
import { errorMiddleware } from '../errors/error-middleware.js';
import { usageRouter } from '../usage/usage-routes.js';
import { apiClientsRouter } from './api-clients-routes.js';
import type { ManagementParts } from './management-parts.js';
import { noStore } from './no-store.js';
import { openApiRouter } from './openapi/openapi-routes.js';
import { requestLog } from './request-log.js';
import { requireAdmin } from './require-admin.js';
import { settingsRouter } from './settings-routes.js';

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
