import type { AuditedChanges } from '../audit/audited-change.js';
import type { Authenticator } from '../auth/authenticator.js';
import type { ClientStore } from '../clients/client-store.js';
import type { RecordStreams } from '../clients/list-thread.js';
import type { Queryable } from '../db/queryable.js';
import type { Logger } from '../log.js';
import type { Clock } from '../oidc/settings.js';
import type { DecisionInvalidator } from '../revocation/nginx-control.js';
import type { SettingsRepository } from '../settings/settings.js';

/**
 * What the management routes work with. Apart from `app.ts`, so a route group takes it from
 * here instead of importing the application that imports the route group.
 */
export interface ManagementParts {
  store: ClientStore;
  authenticator: Authenticator;
  invalidator: DecisionInvalidator;
  log: Logger;
  /** Runs each change with its audit event in one transaction. */
  changes: AuditedChanges;
  /** Where the audit trail and the failure counts are read (management's pool). */
  auditDb: Queryable;
  /** The gateway-wide settings (the bootstrap lock); a change commits with its audit event. */
  settings: SettingsRepository;
  /** Where whole listings are read (the listing thread); default: `store`, on this thread. */
  listings?: RecordStreams;
  /** Time for expiry checks and grace periods; tests move it. */
  clock?: Clock;
}
