import express, { type Express } from 'express';
import { auditRouter } from '../audit/audit-routes.js';
import type { AuditedChanges } from '../audit/audited-change.js';
import type { Authenticator } from '../auth/authenticator.js';
import type { ClientStore } from '../clients/client-store.js';
import type { Queryable } from '../db/queryable.js';
import { NotFoundError } from '../errors/api-error.js';
import { errorMiddleware } from '../errors/error-middleware.js';
import type { Logger } from '../log.js';
import type { Clock } from '../oidc/settings.js';
import type { DecisionInvalidator } from '../revocation/nginx-control.js';
import { apiClientsRouter } from './api-clients-routes.js';
import { rotateRouter } from './rotate-route.js';

/** What the management routes work with. */
export interface ManagementParts {
  store: ClientStore;
  authenticator: Authenticator;
  invalidator: DecisionInvalidator;
  log: Logger;
  /** Runs each change with its audit event in one transaction. */
  changes: AuditedChanges;
  /** Where the audit trail and the failure counts are read (management's pool). */
  auditDb: Queryable;
  /** Time for expiry checks and grace periods; tests move it. */
  clock?: Clock;
}

/** The management API (everything but `/auth`), as an Express application. */
export function createManagementApp(parts: ManagementParts): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.use(apiClientsRouter(parts));
  app.use(rotateRouter(parts));
  app.use(auditRouter(parts.auditDb));
  app.use(() => {
    throw new NotFoundError();
  });
  app.use(errorMiddleware(parts.log));
  return app;
}
