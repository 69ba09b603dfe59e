import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, statSync, utimesSync } from 'node:fs';
import { join, relative } from 'node:path';

const ROOT = join(import.meta.dirname, '../..');

/** The TypeScript sources `npm run build` compiles, with the dist/ file each becomes. */
function compiledSources(): { source: string; output: string }[] {
  const config = JSON.parse(readFileSync(join(ROOT, 'tsconfig.build.json'), 'utf8')) as {
    include: string[];
  };
  const files: { source: string; output: string }[] = [];
  for (const dir of config.include) {
    for (const entry of readdirSync(join(ROOT, dir), { recursive: true, withFileTypes: true })) {
      const name = entry.name;
      if (!entry.isFile() || !name.endsWith('.ts') || name.endsWith('.d.ts')) continue;
      if (name.endsWith('.test.ts')) continue;
      const source = join(entry.parentPath, name);
      files.push({
        source,
        output: join(ROOT, 'dist', relative(ROOT, source).replace(/\.ts$/, '.js')),
      });
    }
  }
  return files;
}

/** Sources whose compiled file is missing or older than they are. */
export function staleSources(): string[] {
  return compiledSources()
    .filter(({ source, output }) => {
      const built = statSync(output, { throwIfNoEntry: false });
      return !built || built.mtimeMs < statSync(source).mtimeMs;
    })
    .map(({ source }) => relative(ROOT, source));
}

/**
 * The build's second step: the console's vendored files (lit-html, and the shared modules of
 * dist/common/ it runs, so after tsc). A copy of a few files: done every time, never stale.
 */
function vendorConsole(): void {
  execFileSync(process.execPath, [join(ROOT, 'scripts/vendor-console.mjs')], { stdio: 'inherit' });
}

/**
 * Vitest global setup: tests that start `dist/` (the native stack, the bootstrap test, the
 * bench smoke test) must run the code in the work tree, so a stale dist/ is rebuilt first.
 * `npx vitest run <file>` thus never tests yesterday's build.
 */
export default function setup(): void {
  buildDist();
  vendorConsole();
}

function buildDist(): void {
  const stale = staleSources();
  if (stale.length === 0) return;
  const shown = stale.slice(0, 3).join(', ') + (stale.length > 3 ? ', ...' : '');
  process.stderr.write(`dist/ is older than ${shown}: running npm run build\n`);
  execFileSync(
    process.execPath,
    [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json'],
    {
      cwd: ROOT,
      stdio: 'inherit',
    },
  );
  // tsc builds incrementally and does not rewrite an output whose source changed back to what
  // it compiled before (an edit undone, a merge): the build said it is current, so mark it so.
  const now = new Date();
  for (const { output } of compiledSources().filter(({ source, output }) => {
    const built = statSync(output, { throwIfNoEntry: false });
    return built !== undefined && built.mtimeMs < statSync(source).mtimeMs;
  }))
    utimesSync(output, now, now);
  const still = staleSources();
  if (still.length > 0)
    throw new Error(`dist/ is still older than ${still.join(', ')} after building`);
}
