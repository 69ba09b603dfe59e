import { randomBytes } from 'node:crypto';
import type { ClientStore } from './clients/client-store.js';
import { formatApiKey, generateSecret } from './keys/api-key.js';

/**
 * Spec 5.2: with `API_KEY_CREATE` exactly "true", every start creates a fresh admin client
 * and prints its key once on stdout. Any other value (unset, "false", "TRUE", "1") does nothing.
 */
export async function createBootstrapKeyIfAsked(
  env: NodeJS.ProcessEnv,
  store: ClientStore,
  print: (line: string) => void,
): Promise<number | null> {
  if (env.API_KEY_CREATE !== 'true') return null;
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  const name = `bootstrap-${stamp}-${randomBytes(3).toString('hex')}`;
  const key = generateSecret();
  const created = await store.create({ name, isAdmin: true, apiClientId: null }, key.hash);
  if (!created.ok)
    throw new Error(`could not create the bootstrap client (${created.conflict} taken)`);
  print(`NEWLY GENERATED API KEY: ${formatApiKey(created.row.id, key.secret)}`);
  return created.row.id;
}
