// Part of `npm run build` (after tsc): puts into console/vendor/, where nginx serves it, what
// the console's ES modules import but do not hold themselves (no bundler, no CDN):
// - lit-html's self-contained ES module, from node_modules;
// - the shared TypeScript the console runs as the API does (common/permissions.ts: one
//   validator for the API and the console), as tsc compiled it into dist/common/, with the
//   modules it imports from there.
// See docs/decisions/20261123-console.md.
import { copyFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, posix } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const to = join(root, 'console', 'vendor');

/** The modules of common/ the console imports (from vendor/common/). */
const SHARED = ['permissions.js'];

// Source maps are not shipped: the comment that names one would make browsers ask for it.
const withoutSourceMap = (source) => source.replace(/\n\/\/# sourceMappingURL=\S+\s*$/, '\n');

function vendorLitHtml() {
  const from = join(root, 'node_modules', 'lit-html');
  const source = withoutSourceMap(readFileSync(join(from, 'lit-html.js'), 'utf8'));
  if (/^\s*import\s/m.test(source))
    throw new Error('lit-html.js imports other modules: vendor them too');
  writeFileSync(join(to, 'lit-html.js'), source);
  copyFileSync(join(from, 'LICENSE'), join(to, 'lit-html.LICENSE'));
}

/**
 * Copies dist/common/<name> and every module it imports, which must be in dist/common/ or a
 * folder of it (`./x.js`, `./contract/x.js`, `../x.js` from there): a bare or `node:` import
 * would not load in the browser.
 */
function vendorShared() {
  const from = join(root, 'dist', 'common');
  const into = join(to, 'common');
  rmSync(into, { recursive: true, force: true });
  mkdirSync(into, { recursive: true });
  const pending = [...SHARED];
  const done = new Set();
  while (pending.length > 0) {
    const name = pending.pop();
    if (done.has(name)) continue;
    done.add(name);
    let source;
    try {
      source = readFileSync(join(from, name), 'utf8');
    } catch {
      throw new Error(`dist/common/${name} is missing: run tsc -p tsconfig.build.json first`);
    }
    for (const [, spec] of source.matchAll(
      /^\s*(?:import|export)\b[^;]*?\bfrom\s*['"]([^'"]+)['"]/gm,
    )) {
      const target = posix.normalize(posix.join(posix.dirname(name), spec));
      if (!/^\.\.?\/[\w./-]+\.js$/.test(spec) || target.startsWith('..'))
        throw new Error(
          `dist/common/${name} imports ${spec}: the console can load only *.js of common/`,
        );
      pending.push(target);
    }
    if (/^\s*import\s*['"(]/m.test(source))
      throw new Error(`dist/common/${name} has an import the console cannot follow`);
    mkdirSync(dirname(join(into, name)), { recursive: true });
    writeFileSync(join(into, name), withoutSourceMap(source));
  }
}

mkdirSync(to, { recursive: true });
vendorLitHtml();
vendorShared();
