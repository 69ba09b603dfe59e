// Part of `npm run build` (after tsc): makes every file package.json's "bin" names executable.
// tsc writes new files 0644. npm marks a bin executable only when it links it, and `npx
// gateway-config` in a checkout links it once into npx's cache: after a fresh clone at the same
// path (CI does exactly that) or a `rm -rf dist`, the cached link points at a file tsc wrote
// anew, and the shell answers "Permission denied" (exit 127). The build owns the mode instead.
import { chmodSync, readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

// The package's root: this checkout's, or the one given (the test gives its own).
const root = process.argv[2] ?? join(dirname(fileURLToPath(import.meta.url)), '..');
const { bin = {} } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));

for (const file of Object.values(bin)) {
  const path = join(root, file);
  chmodSync(path, statSync(path).mode | 0o111);
}
