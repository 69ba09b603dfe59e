import { randomBytes } from 'node:crypto';
import { link, open, readFile, rename, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

/**
 * Writes `content` to a hidden temporary file beside `path` (same file system, so the final
 * step is atomic) and returns its name. Hidden and not ending in `.conf`, so nginx's
 * `conf.d/*.conf` never picks up a half-written file.
 */
async function writeTemporary(path: string, content: string, mode: number): Promise<string> {
  const temporary = join(dirname(path), `.${basename(path)}.${randomBytes(6).toString('hex')}.tmp`);
  const handle = await open(temporary, 'wx', mode);
  try {
    await handle.writeFile(content);
    await handle.sync();
    await handle.close();
  } catch (err) {
    await handle.close().catch(() => {});
    await unlink(temporary).catch(() => {});
    throw err;
  }
  return temporary;
}

/** Replaces `path` atomically: readers see the old file or the new one, never a mix. */
export async function replaceFile(path: string, content: string, mode = 0o644): Promise<void> {
  const temporary = await writeTemporary(path, content, mode);
  try {
    await rename(temporary, path);
  } catch (err) {
    await unlink(temporary).catch(() => {});
    throw err;
  }
}

/**
 * Creates `path` atomically unless it exists; returns false (and changes nothing) if it does.
 * `link` fails on an existing name, so even a concurrent writer's file is never overwritten.
 */
export async function createFile(path: string, content: string, mode = 0o644): Promise<boolean> {
  const temporary = await writeTemporary(path, content, mode);
  try {
    await link(temporary, path);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  } finally {
    await unlink(temporary).catch(() => {});
  }
}

/** The text of `path`, or undefined when there is no such file (any other failure throws). */
export async function readIfPresent(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}
