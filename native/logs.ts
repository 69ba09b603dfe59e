import { createWriteStream, type WriteStream } from 'node:fs';
import { chmod, mkdir, open, readdir } from 'node:fs/promises';
import { join } from 'node:path';

// The logs are the operator's alone: the sidecar's holds the bootstrap admin key (NEWLY
// GENERATED API KEY), and the others name clients, addresses and requests.
const DIR_MODE = 0o700;
/** Every log file of the native run, however it is first written. */
export const LOG_FILE_MODE = 0o600;

/**
 * Makes the log folder owner-only: born so when new; in a home from an earlier version, it
 * and every file in it are tightened (they were 0755 and 0644).
 */
export async function prepareLogDir(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true, mode: DIR_MODE });
  await chmod(dir, DIR_MODE);
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    // Files only: a link someone put there could point at anything.
    if (entry.isFile()) await chmod(join(dir, entry.name), LOG_FILE_MODE);
  }
}

/** Appends to a log file, creating it owner-only. */
export function appendToLog(path: string): WriteStream {
  return createWriteStream(path, { flags: 'a', mode: LOG_FILE_MODE });
}

/**
 * Creates a log file another program opens by itself, owner-only: nginx creates its logs 0644
 * but keeps the mode of one that exists (its master opens them as root; the workers write
 * through the master's descriptors, so root's 0600 shuts none of them out).
 */
export async function createLogFile(path: string): Promise<void> {
  const file = await open(path, 'a', LOG_FILE_MODE);
  await file.close();
}
