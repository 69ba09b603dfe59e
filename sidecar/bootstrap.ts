import { randomBytes } from 'node:crypto';
import { TransactionalChanges } from './audit/audited-change.js';
import type { ClientStore } from './clients/store/writes.js';
import type { Clock } from './clock.js';
import { formatApiKey, generateSecret } from './keys/api-key.js';
import type { Logger } from './log.js';
import type { SettingsRepository } from './settings/settings.js';

/** Why a start with API_KEY_CREATE=true minted no key. */
export interface BootstrapRefusal {
  reason: 'bootstrap_locked';
  /** How many admin clients exist (at least one: without any, the lock does not hold). */
  adminCount: number;
}

export interface BootstrapParts {
  store: ClientStore;
  settings: SettingsRepository;
  log: Logger;
  /** Where the key line goes; stdout in production. */
  print: (line: string) => void;
  /**
   * Called when the lock refuses to mint: the seam where the audit trail records
   * `bootstrap_key.refuse`. A failure here fails the start-up (an audit that cannot be written
   * is an infrastructure fault, and the start is retried like any other).
   */
  onRefuse?: (refusal: BootstrapRefusal) => Promise<void>;
  /** The time in the client's name; tests move it. */
  clock?: Clock;
}

export const LOCKED_MESSAGE =
  'API_KEY_CREATE=true ignored: the bootstrap lock is on and an admin client exists, so no ' +
  'key was created. To get a key, use an existing admin credential; to unlock, send ' +
  'PUT /v1/management/settings {"bootstrap_locked": false} with one.';

/**
 * The line a refused mint prints on stdout, beside the log's warning: where the key line would
 * have been (the native run's terminal, a container's log), not only in the JSON log.
 */
export const REFUSED_LINE = `NO API KEY GENERATED: ${LOCKED_MESSAGE}`;

/**
 * Spec 5.2: with `API_KEY_CREATE` exactly "true", every start creates a fresh admin client
 * and prints its key once on stdout. Any other value (unset, "false", "TRUE", "1") does nothing.
 * The bootstrap lock (PUT /v1/management/settings) stops it while an admin client exists;
 * with no admin at all a key is minted anyway, so a locked gateway is never unrecoverable.
 * The client and its audit event (`bootstrap_key.issue`, actor `bootstrap`) commit together.
 */
export async function createBootstrapKeyIfAsked(
  env: NodeJS.ProcessEnv,
  { store, settings, log, print, onRefuse, clock = Date.now }: BootstrapParts,
): Promise<number | null> {
  if (env.API_KEY_CREATE !== 'true') return null;
  const { bootstrapLocked } = await settings.read();
  if (bootstrapLocked) {
    const adminCount = await store.countAdmins(clock());
    if (adminCount > 0) {
      log.warn(LOCKED_MESSAGE, { reason: 'bootstrap_locked', admin_clients: adminCount });
      print(REFUSED_LINE);
      await onRefuse?.({ reason: 'bootstrap_locked', adminCount });
      return null;
    }
    log.warn('the bootstrap lock is on but no admin client exists: creating a key anyway', {
      reason: 'bootstrap_locked_without_admin',
    });
  }
  const stamp = new Date(clock()).toISOString().replace(/[:.]/g, '-');
  const name = `bootstrap-${stamp}-${randomBytes(3).toString('hex')}`;
  const key = generateSecret();
  const created = await new TransactionalChanges(store.pool).run(
    (db) => store.create({ name, isAdmin: true, apiClientId: null }, key.hash, db),
    (outcome) => ({
      action: 'bootstrap_key.issue',
      outcome: outcome.ok ? 'success' : 'failure',
      actor: { apiKeyId: null, name: null, authMethod: 'bootstrap' },
      targetId: outcome.ok ? outcome.row.id : null,
      requestId: null,
      sourceAddress: null,
      details: { name, is_admin: true },
    }),
  );
  if (!created.ok)
    throw new Error(`could not create the bootstrap client (${created.conflict} taken)`);
  print(`NEWLY GENERATED API KEY: ${formatApiKey(created.row.id, key.secret)}`);
  return created.row.id;
}
