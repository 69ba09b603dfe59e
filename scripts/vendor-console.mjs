// Part of `npm run build`: copies the console's one dependency, lit-html's self-contained ES
// module, from node_modules into console/vendor/ where nginx serves it (no bundler, no CDN).
// See docs/decisions/20261123-console.md.
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const from = join(root, 'node_modules', 'lit-html');
const to = join(root, 'console', 'vendor');
mkdirSync(to, { recursive: true });
// Its source map is not shipped: the comment that names it would make browsers ask for it.
const source = readFileSync(join(from, 'lit-html.js'), 'utf8').replace(
  /\n\/\/# sourceMappingURL=\S+\s*$/,
  '\n',
);
if (/^\s*import\s/m.test(source))
  throw new Error('lit-html.js imports other modules: vendor them too');
writeFileSync(join(to, 'lit-html.js'), source);
copyFileSync(join(from, 'LICENSE'), join(to, 'lit-html.LICENSE'));
