import { randomBytes } from 'node:crypto';
import { TransactionalChanges } from './audit/audited-change.js';
import type { ClientStore } from './clients/client-store.js';
import { formatApiKey, generateSecret } from './keys/api-key.js';
import type { Clock } from './oidc/settings.js';

/**
 * Spec 5.2: with `API_KEY_CREATE` exactly "true", every start creates a fresh admin client
 * and prints its key once on stdout. Any other value (unset, "false", "TRUE", "1") does nothing.
 * The client and its audit event (`bootstrap_key.issue`, actor `bootstrap`) commit together.
 */
export async function createBootstrapKeyIfAsked(
  env: NodeJS.ProcessEnv,
  store: ClientStore,
  print: (line: string) => void,
  clock: Clock = Date.now,
): Promise<number | null> {
  if (env.API_KEY_CREATE !== 'true') return null;
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
