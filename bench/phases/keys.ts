import { randomBytes } from 'node:crypto';
import { Client, inParallel } from '../load/client.js';
import { CLIENTS_PATH } from '../stack/setup.js';
import type { PhaseContext } from './context.js';

export interface CreatedKey {
  id: number;
  token: string;
  /** performance.now() when its creation was answered (201). */
  createdAt: number;
}

/** Creates `count` non-admin clients with keys through gateway A's management API (set-up). */
export async function createKeys(
  ctx: PhaseContext,
  count: number,
  prefix: string,
): Promise<CreatedKey[]> {
  const { a } = ctx.stack;
  const client = new Client(a.url, a.ca, 8);
  const tag = randomBytes(3).toString('hex');
  try {
    return await inParallel(Array.from({ length: count }), 8, async (_, i) => {
      const res = await client.send(
        'POST',
        CLIENTS_PATH,
        { Authorization: `apk ${a.adminKey}` },
        { name: `${prefix}-${tag}-${i}`, is_admin: false, generate_api_key: true },
      );
      if (res.status !== 201) throw new Error(`creating a key: ${res.status} ${res.text}`);
      const body = JSON.parse(res.text) as { api_key_id: number; token: string };
      return { id: body.api_key_id, token: body.token, createdAt: res.endAt };
    });
  } finally {
    client.close();
  }
}
