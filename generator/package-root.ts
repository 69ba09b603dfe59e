import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The package root, found by walking up to package.json: the same answer from
 * `generator/*.ts` (vitest, vite-node) and `dist/generator/*.js` (compiled), so templates
 * read at run time are found in both.
 */
export function packageRoot(from: string = fileURLToPath(import.meta.url)): string {
  let dir = dirname(from);
  for (;;) {
    if (existsSync(join(dir, 'package.json'))) return dir;
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`no package.json above ${from}`);
    dir = parent;
  }
}

/** Directory of the handlebars templates shipped with the package. */
export function templatesDir(): string {
  return join(packageRoot(), 'templates');
}
