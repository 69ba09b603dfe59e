import { execFile } from 'node:child_process';
import { chmod, chown, stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** A local account: its name, uid and primary gid. */
export interface Account {
  user: string;
  uid: number;
  gid: number;
}

/** uid and gid of a local user, or null when there is no such user. */
export async function accountOf(user: string): Promise<Account | null> {
  try {
    const [uid, gid] = await Promise.all([
      run('id', ['-u', user]).then((r) => Number(r.stdout.trim())),
      run('id', ['-g', user]).then((r) => Number(r.stdout.trim())),
    ]);
    return { user, uid, gid };
  } catch {
    return null;
  }
}

/**
 * As root, the unprivileged account nginx's workers run as (the master keeps root to bind the
 * port and read the key): Debian's web user www-data, else nobody. Not root: null (the
 * workers are the caller's own user anyway).
 */
export async function nginxWorkerAccount(): Promise<Account | null> {
  if (process.getuid?.() !== 0) return null;
  for (const user of ['www-data', 'nobody']) {
    const account = await accountOf(user);
    if (account) return account;
  }
  throw new Error('no unprivileged user (www-data or nobody) to run nginx workers as');
}

/**
 * Opens a directory to the workers' group, no further: root:<group> 0710, so they can reach
 * the sockets and temporary directories inside by name but not list it.
 */
export async function openDirTo(dir: string, account: Account): Promise<void> {
  await chown(dir, 0, account.gid);
  await chmod(dir, 0o710);
}

/** Lets the workers connect to a unix socket (connecting needs write permission): root:<group> 0660. */
export async function openSocketTo(path: string, account: Account): Promise<void> {
  await chown(path, 0, account.gid);
  await chmod(path, 0o660);
}

/** Whether every directory from `dir` up to / lets others pass (the x bit for others). */
export async function traversableByOthers(dir: string): Promise<boolean> {
  for (let d = dir; ; d = dirname(d)) {
    const info = await stat(d).catch(() => null);
    if (info && (info.mode & 0o001) === 0) return false;
    if (dirname(d) === d) return true;
  }
}
