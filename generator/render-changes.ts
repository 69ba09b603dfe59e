import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { renderConfigFiles } from './render.js';
import type { Settings } from './settings-schema.js';

/** A file `render` would replace with different content: the lines it would drop and add. */
export interface RenderChange {
  path: string;
  removed: string[];
  added: string[];
}

/** Lines of `a` not matched by a line of `b` (each line of `b` matches once), in order. */
function missingFrom(a: string[], b: string[]): string[] {
  const left = new Map<string, number>();
  for (const line of b) left.set(line, (left.get(line) ?? 0) + 1);
  return a.filter((line) => {
    const n = left.get(line) ?? 0;
    if (n > 0) left.set(line, n - 1);
    return n === 0;
  });
}

/**
 * What rendering `settings` into `dir` would change in files already there: an operator's
 * edit (an ssl_protocols line, a toggle) shows up as a removed line. Absent files and files
 * that would stay the same are not listed.
 */
export async function renderChanges(dir: string, settings: Settings): Promise<RenderChange[]> {
  const changes: RenderChange[] = [];
  for (const file of renderConfigFiles(settings)) {
    const present = await readFile(join(dir, file.path), 'utf8').catch(() => null);
    if (present === null || present === file.content) continue;
    const before = present.split('\n');
    const after = file.content.split('\n');
    changes.push({
      path: file.path,
      removed: missingFrom(before, after).filter((l) => l.trim() !== ''),
      added: missingFrom(after, before).filter((l) => l.trim() !== ''),
    });
  }
  return changes;
}

/** The changes as lines for the terminal: `- ` dropped, `+ ` added, at most `max` of each per file. */
export function describeChanges(dir: string, changes: RenderChange[], max = 20): string[] {
  const lines: string[] = [];
  const some = (mark: string, list: string[]) => {
    for (const line of list.slice(0, max)) lines.push(`    ${mark} ${line.trim()}`);
    if (list.length > max) lines.push(`    ${mark} … ${list.length - max} more`);
  };
  for (const change of changes) {
    lines.push(`  ${join(dir, change.path)}:`);
    some('-', change.removed);
    some('+', change.added);
  }
  return lines;
}
