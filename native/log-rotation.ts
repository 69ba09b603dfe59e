import { chmod, copyFile, readdir, rename, stat, truncate } from 'node:fs/promises';
import { join } from 'node:path';
import { LOG_FILE_MODE } from './logs.js';

/** Rotated generations kept of each log: `<name>.log.1` (newest) and `<name>.log.2`. */
export const KEPT_GENERATIONS = 2;
/** How often the sizes are looked at: a flood at 20,000 requests/s adds 40 MB of access log in 10 s. */
export const CHECK_INTERVAL_MS = 10_000;
const DEFAULT_MAX_MB = 64;
const MB = 1024 * 1024;

/**
 * GATEWAY_LOG_MAX_MB: the size past which a log of the native run is rotated (default 64; a
 * decimal number; 0 never rotates). Returns the limit in bytes (0: off), or throws naming the
 * variable, so a typo stops the run before anything starts.
 */
export function logLimitBytes(value: string | undefined): number {
  const text = value?.trim() ?? '';
  if (text === '') return DEFAULT_MAX_MB * MB;
  // Finite as well: a string of a few hundred digits is Infinity to Number().
  const mb = Number(text);
  if (!/^\d+(\.\d+)?$/.test(text) || !Number.isFinite(mb)) {
    throw new Error(
      `GATEWAY_LOG_MAX_MB must be a number of megabytes (0: never rotate), got ${JSON.stringify(value)}`,
    );
  }
  return Math.floor(mb * MB);
}

/**
 * Rotates `path` when it is larger than `maxBytes`: `.1` becomes `.2` (the oldest is dropped),
 * the log is copied to `.1`, then emptied in place. Copy and truncate, not rename and reopen:
 * every writer keeps its descriptor (nginx's workers write through the master's, and as
 * www-data could not reopen a file in the owner-only folder), and all of them append
 * (O_APPEND), so they go on at the start of the emptied file. What is written between the copy
 * and the truncate (a few milliseconds) is lost, as with logrotate's copytruncate.
 * Returns true when it rotated.
 */
export async function rotateIfLarge(path: string, maxBytes: number): Promise<boolean> {
  if (maxBytes <= 0 || (await stat(path)).size <= maxBytes) return false;
  for (let generation = KEPT_GENERATIONS - 1; generation >= 1; generation -= 1) {
    await rename(`${path}.${generation}`, `${path}.${generation + 1}`).catch(ignoreMissing);
  }
  const newest = `${path}.1`;
  await copyFile(path, newest);
  await chmod(newest, LOG_FILE_MODE);
  await truncate(path, 0);
  return true;
}

/** Every `*.log` in `dir` past `maxBytes`, rotated; returns the names rotated. */
export async function rotateLogs(dir: string, maxBytes: number): Promise<string[]> {
  const rotated: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    // Files only, and only the logs themselves (not their rotated generations).
    if (!entry.isFile() || !entry.name.endsWith('.log')) continue;
    if (await rotateIfLarge(join(dir, entry.name), maxBytes).catch(ignoreMissingAsFalse)) {
      rotated.push(entry.name);
    }
  }
  return rotated;
}

/**
 * Looks at the logs in `dir` every CHECK_INTERVAL_MS and rotates those past `maxBytes`
 * (nothing when it is 0). A failure is reported through `warn` and tried again at the next
 * look: a full disk must not stop the gateway. Returns the function that stops it.
 */
export function startLogRotation(
  dir: string,
  maxBytes: number,
  warn: (line: string) => void,
): () => void {
  if (maxBytes <= 0) return () => undefined;
  let running = false;
  const look = () => {
    if (running) return;
    running = true;
    rotateLogs(dir, maxBytes)
      .catch((err: unknown) => warn(`cannot rotate the logs in ${dir}: ${(err as Error).message}`))
      .finally(() => {
        running = false;
      });
  };
  look();
  const timer = setInterval(look, CHECK_INTERVAL_MS);
  timer.unref();
  return () => clearInterval(timer);
}

function ignoreMissing(err: NodeJS.ErrnoException): void {
  if (err.code !== 'ENOENT') throw err;
}

function ignoreMissingAsFalse(err: NodeJS.ErrnoException): false {
  ignoreMissing(err);
  return false;
}
