import type { ApiClientRow } from '../clients/api-client.js';
import type { ClientDirectory } from '../clients/client-directory.js';
import { parseApiKey, secretMatches } from '../keys/api-key.js';
import { type AuthDecision, refuse } from './decision.js';

/** Verifies `apk <id>.<secret>`: look the client up by id, compare hashes in constant time. */
export class ApiKeyVerifier {
  constructor(private readonly clients: Pick<ClientDirectory, 'byId'>) {}

  async verify(key: string): Promise<AuthDecision> {
    const parsed = parseApiKey(key);
    if (!parsed.ok) return refuse('MALFORMED_CREDENTIALS', parsed.reason, { scheme: 'apk' });
    const row: ApiClientRow | null = await this.clients.byId(parsed.id);
    if (!row || row.keyHash === null || !secretMatches(parsed.secret, row.keyHash)) {
      return refuse('INVALID_API_KEY', 'The API key is not valid.', { scheme: 'apk' });
    }
    return {
      ok: true,
      method: 'apk',
      identity: {
        id: row.id,
        clientId: String(row.id),
        clientName: row.name,
        isAdmin: row.isAdmin,
      },
    };
  }
}
