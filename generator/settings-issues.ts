import type { z } from 'zod';
import { ALLOWED_KEYS } from './settings-schema.js';

/** `['tls', 'protocols', 0]` → `tls.protocols[0]`; the root is `(settings)`. */
export function formatPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const part of path) {
    if (typeof part === 'number') out += `[${part}]`;
    else out += out === '' ? String(part) : `.${String(part)}`;
  }
  return out === '' ? '(settings)' : out;
}

function editDistance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let diagonal = row[0]!;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const above = row[j]!;
      row[j] = Math.min(above + 1, row[j - 1]! + 1, diagonal + (a[i - 1] === b[j - 1] ? 0 : 1));
      diagonal = above;
    }
  }
  return row[b.length]!;
}

function unknownKey(objectPath: readonly PropertyKey[], key: string): string {
  const allowed = ALLOWED_KEYS[objectPath.join('.')] ?? [];
  const close = allowed
    .map((candidate) => ({ candidate, distance: editDistance(key, candidate) }))
    .filter(({ distance }) => distance <= 2)
    .sort((x, y) => x.distance - y.distance)[0];
  const hint = close ? `did you mean "${close.candidate}"?` : `allowed: ${allowed.join(', ')}`;
  return `${formatPath([...objectPath, key])}: unknown key (${hint})`;
}

/**
 * One line per problem, each starting with its path. An unknown-keys issue becomes one line
 * per key, so that "every error at once" also means every misspelt key.
 */
export function describeIssues(
  issues: readonly z.core.$ZodIssue[],
  sourceOf: (path: string) => string | undefined = () => undefined,
): string[] {
  const lines: string[] = [];
  for (const issue of issues) {
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) lines.push(unknownKey(issue.path, key));
      continue;
    }
    const path = formatPath(issue.path);
    const source = sourceOf(path);
    lines.push(`${path}${source ? ` (from ${source})` : ''}: ${issue.message}`);
  }
  return lines;
}
