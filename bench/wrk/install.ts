import { execFile } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export function onPath(name: string): string | null {
  for (const dir of (process.env.PATH ?? '').split(delimiter).concat('/usr/bin', '/usr/sbin')) {
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
export function ensureWrk(say: (line: string) => void): Promise<string> {
  return ensureCommand('wrk', 'wrk', say);
}

/**
 * `command` from PATH, or installed from Debian's `pkg` when missing and we are root (wrk;
 * haproxy for the balancer row). Anyone else gets the command to run.
 */
export async function ensureCommand(
  command: string,
  pkg: string,
  say: (line: string) => void,
): Promise<string> {
  const found = onPath(command);
  if (found) return found;
  if (process.getuid?.() !== 0) {
    throw new Error(`${command} is not installed; install it with: sudo apt-get install -y ${pkg}`);
  }
  say(`${command} is missing: apt-get install -y ${pkg}`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  try {
    await run('apt-get', ['install', '-y', pkg], { env, timeout: 180_000 });
  } catch {
    // A fresh machine may have no package lists yet.
    await run('apt-get', ['update'], { env, timeout: 180_000 });
    await run('apt-get', ['install', '-y', pkg], { env, timeout: 180_000 });
  }
  const installed = onPath(command);
  if (!installed) throw new Error(`apt-get install ${pkg} did not provide a ${command} command`);
  return installed;
}
