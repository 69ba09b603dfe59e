import { http } from '../../test/support/http.js';
import { CLIENTS_PATH } from '../stack/setup.js';
import type { PhaseContext } from './context.js';

export interface BenchClient {
  id: number;
  /** Its API key, `<id>.<secret>`. */
  token: string;
  /** PUTs `fields` on it through gateway A, then gives B a moment to hear of it (LISTEN). */
  put(fields: Record<string, unknown>): Promise<void>;
}

/**
 * A non-admin client with a key, made through gateway A with its admin key, whose fields a
 * phase changes between rounds (a rate limit, permissions) while measuring it on gateway B.
 */
export async function benchClient(ctx: PhaseContext, prefix: string): Promise<BenchClient> {
  const { a } = ctx.stack;
  const manage = async (method: string, path: string, json: unknown) => {
    const res = await http(`${a.url}${path}`, {
      method,
      headers: { Host: 'localhost', Authorization: `apk ${a.adminKey}` },
      json,
      tls: { ca: a.ca, servername: 'localhost' },
    });
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${res.text}`);
    return res.json as { api_key_id: number; token?: string };
  };
  const created = await manage('POST', CLIENTS_PATH, {
    name: `${prefix}-${Date.now()}`,
    is_admin: false,
    generate_api_key: true,
  });
  const id = created.api_key_id;
  if (!created.token) throw new Error(`${prefix}: the created client has no key`);
  return {
    id,
    token: created.token,
    put: async (fields) => {
      await manage('PUT', `${CLIENTS_PATH}/${id}`, fields);
      // B hears of the change through PostgreSQL's notification: give it a moment.
      await new Promise((r) => setTimeout(r, 300));
    },
  };
}
