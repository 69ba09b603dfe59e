import { execFile } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

function onPath(name: string): string | null {
  for (const dir of (process.env.PATH ?? '').split(delimiter).concat('/usr/bin')) {
    if (!dir) continue;
    try {
      accessSync(join(dir, name), constants.X_OK);
      return join(dir, name);
    } catch {
      // not here
    }
  }
  return null;
}

/**
 * wrk from PATH; installed from the Debian package when missing and we are root (the README's
 * set-up runs as root too). Anyone else gets the command to run.
 */
export async function ensureWrk(say: (line: string) => void): Promise<string> {
  const found = onPath('wrk');
  if (found) return found;
  if (process.getuid?.() !== 0) {
    throw new Error('wrk is not installed; install it with: sudo apt-get install -y wrk');
  }
  say('wrk is missing: apt-get install -y wrk');
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  try {
    await run('apt-get', ['install', '-y', 'wrk'], { env, timeout: 180_000 });
  } catch {
    // A fresh machine may have no package lists yet.
    await run('apt-get', ['update'], { env, timeout: 180_000 });
    await run('apt-get', ['install', '-y', 'wrk'], { env, timeout: 180_000 });
  }
  const installed = onPath('wrk');
  if (!installed) throw new Error('apt-get install wrk did not provide a wrk command');
  return installed;
}
