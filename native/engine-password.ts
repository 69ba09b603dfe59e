import { randomBytes } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/** Where the native run keeps the engine administrator's generated password (owner only). */
export const ENGINE_PASSWORD_FILE = 'engine-admin-password';

/**
 * The engine's administrator password when ENGINE_ADMIN_PASSWORD is unset: generated at the
 * home's first start and kept in `<home>/engine-admin-password` (0600), so that it is printed
 * once and stays valid, like the bootstrap key; `fresh` says whether this start made it.
 */
export async function enginePassword(
  homeRoot: string,
): Promise<{ password: string; fresh: boolean; file: string }> {
  const file = join(homeRoot, ENGINE_PASSWORD_FILE);
  const kept = (await readFile(file, 'utf8').catch(() => '')).trim();
  if (kept !== '') return { password: kept, fresh: false, file };
  const password = randomBytes(18).toString('base64url');
  await writeFile(file, `${password}\n`, { mode: 0o600, flag: 'w' });
  return { password, fresh: true, file };
}
