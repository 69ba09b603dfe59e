import { execFile } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { formatJson } from './json.js';

const run = promisify(execFile);

/** The commit measured, and whether the code that decides performance had local changes. */
export async function codeVersion(
  root: string,
): Promise<{ commit: string; uncommitted: string[] }> {
  try {
    const { stdout: commit } = await run('git', ['rev-parse', 'HEAD'], { cwd: root });
    const { stdout: status } = await run(
      'git',
      ['status', '--porcelain', '--', 'templates', 'generator', 'sidecar', 'engine', 'native'],
      { cwd: root },
    );
    return {
      commit: commit.trim(),
      uncommitted: status
        .split('\n')
        .map((l) => l.trim())
        .filter(Boolean),
    };
  } catch {
    return { commit: 'unknown (not a git checkout)', uncommitted: [] };
  }
}

/**
 * Writes `<dir>/<timestamp>.json` and returns its path. One file per run: the newest is the
 * last by name (the timestamps sort), so no copy of it is kept beside.
 */
export async function writeResults(dir: string, startedAt: Date, data: unknown): Promise<string> {
  await mkdir(dir, { recursive: true });
  const file = join(dir, `${startedAt.toISOString().replace(/[:.]/g, '-')}.json`);
  await writeFile(file, formatJson(data));
  return file;
}
