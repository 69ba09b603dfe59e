import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'vitest';

/**
 * Rewrites `set $name value;` lines of a stack's mounted default.conf, as an operator edits
 * it (restart afterwards). Each name must have its line: a renamed variable fails the test
 * instead of being silently ignored.
 */
export async function setDefaultConf(
  configDir: string,
  values: Record<string, string>,
): Promise<void> {
  const file = join(configDir, 'nginx/conf.d/default.conf');
  let text = await readFile(file, 'utf8');
  for (const [name, value] of Object.entries(values)) {
    const line = new RegExp(`^(\\s*set \\$${name}) .*;$`, 'm');
    expect(text, name).toMatch(line);
    text = text.replace(line, `$1 ${value};`);
  }
  await writeFile(file, text);
}
