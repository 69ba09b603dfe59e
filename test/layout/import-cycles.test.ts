import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, test } from 'vitest';

// STYLE: "a part that needs its parent's type takes it from a third file both import". Type-only
// imports count: a circle of types is the same tangle to read, and it turns into a circle of
// values with the first `import { x }` added to either side.

const ROOT = resolve(import.meta.dirname, '../..');
const PARTS = [
  'generator',
  'sidecar',
  'engine',
  'native',
  'common',
  'bench',
  'testcontainers',
  'console/js',
];
const IMPORT = /^\s*(?:import|export)\b[^'";]*?from\s+['"](\.{1,2}\/[^'"]+)['"]/gm;

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return name === 'node_modules' ? [] : sources(path);
    return /\.(ts|js|mjs)$/.test(name) && !name.endsWith('.d.ts') ? [path] : [];
  });
}

/** The file a relative specifier names: `./x.js` is `./x.ts` when that is the source. */
function target(from: string, specifier: string): string | null {
  const path = resolve(dirname(from), specifier);
  for (const candidate of [path.replace(/\.js$/, '.ts'), path]) {
    if (existsSync(candidate) && statSync(candidate).isFile()) return candidate;
  }
  return null;
}

function importGraph(files: string[]): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const text = readFileSync(file, 'utf8');
    const edges = [...text.matchAll(IMPORT)]
      .map((m) => target(file, m[1]!))
      .filter((t): t is string => t !== null);
    graph.set(file, edges);
  }
  return graph;
}

/** Strongly connected components of more than one file, or a file importing itself (Tarjan). */
function circles(graph: Map<string, string[]>): string[][] {
  let index = 0;
  const indices = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (node: string) => {
    indices.set(node, index);
    low.set(node, index);
    index += 1;
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!indices.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node)!, low.get(next)!));
      } else if (onStack.has(next)) {
        low.set(node, Math.min(low.get(node)!, indices.get(next)!));
      }
    }
    if (low.get(node) === indices.get(node)) {
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
      } while (member !== node);
      if (component.length > 1 || (graph.get(node) ?? []).includes(node))
        found.push(component.sort());
    }
  };
  for (const node of graph.keys()) if (!indices.has(node)) visit(node);
  return found;
}

describe('imports', () => {
  test('no file imports, through any chain, a file that imports it back', () => {
    const files = PARTS.flatMap((part) => sources(join(ROOT, part)));
    expect(files.length).toBeGreaterThan(200);
    const found = circles(importGraph(files)).map((c) => c.map((f) => relative(ROOT, f)));
    expect(found).toEqual([]);
  });

  test('the search finds a circle of two, of three, and a file importing itself', () => {
    const graph = new Map([
      ['a', ['b']],
      ['b', ['a', 'c']],
      ['c', ['d']],
      ['d', ['e']],
      ['e', ['c']],
      ['f', ['f']],
      ['g', ['a']],
    ]);
    expect(circles(graph)).toEqual([['c', 'd', 'e'], ['a', 'b'], ['f']]);
  });
});
