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
/**
 * The sidecar's rooms from the ground up (docs/architecture.md, "The sidecar's rooms"): a file
 * imports from its own room and the rooms before it, never from one after it. A room is a
 * folder or a file; a file belongs to the longest one that holds it.
 */
const SIDECAR_ROOMS: readonly string[] = [
  'common',
  // The ground floor: what every room may use.
  'sidecar/log.ts',
  'sidecar/clock.ts',
  'sidecar/instance.ts',
  'sidecar/request-id.ts',
  // Spans: what every room may open (it leans on nothing of the sidecar but its log).
  'sidecar/tracing',
  'sidecar/nginx',
  // Storage and the HTTP plumbing.
  'sidecar/db',
  'sidecar/errors',
  'sidecar/http',
  'sidecar/keys',
  'sidecar/metrics',
  // The API clients' rows, and nginx's replica of them.
  'sidecar/clients/store',
  'sidecar/replica',
  // Deciding a request.
  'sidecar/proof',
  'sidecar/auth',
  'sidecar/oidc',
  'sidecar/frames',
  'sidecar/revocation',
  // What decisions and changes leave behind, and the management routes over them.
  'sidecar/audit',
  'sidecar/usage',
  'sidecar/ratelimit',
  'sidecar/clients/listing',
  'sidecar/clients/routes',
  'sidecar/settings',
  'sidecar/management',
  // The wiring: configuration, start-up, the server.
  'sidecar',
];

/** The room of a file (a path relative to the root), or null outside the sidecar's rooms. */
function roomOf(file: string): number | null {
  let best: number | null = null;
  SIDECAR_ROOMS.forEach((room, i) => {
    const holds = file === room || file.startsWith(`${room}/`);
    if (holds && (best === null || room.length > SIDECAR_ROOMS[best]!.length)) best = i;
  });
  return best;
}

/** Imports from a room to a room after it in SIDECAR_ROOMS, as `from → to`. */
function upwardImports(graph: Map<string, string[]>): string[] {
  const found: string[] = [];
  for (const [from, targets] of graph) {
    const own = roomOf(from);
    if (own === null) continue;
    for (const to of targets) {
      const theirs = roomOf(to);
      if (theirs !== null && theirs > own) found.push(`${from} → ${to}`);
    }
  }
  return found;
}

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

  test("no sidecar room imports a room above it (SIDECAR_ROOMS' order)", () => {
    const files = ['sidecar', 'common'].flatMap((part) => sources(join(ROOT, part)));
    const graph = new Map(
      [...importGraph(files)].map(([file, targets]) => [
        relative(ROOT, file),
        targets.map((t) => relative(ROOT, t)),
      ]),
    );
    for (const file of graph.keys()) expect(roomOf(file), file).not.toBeNull();
    expect(upwardImports(graph)).toEqual([]);
  });

  test('an import from the ground floor up, or across to a later room, is found', () => {
    const graph = new Map([
      ['sidecar/nginx/control.ts', ['sidecar/log.ts', 'sidecar/metrics/sidecar-metrics.ts']],
      ['sidecar/auth/decision.ts', ['sidecar/clients/store/api-client.ts']],
      ['sidecar/clients/store/last-used.ts', ['sidecar/auth/auth-observer.ts']],
      ['sidecar/sidecar.ts', ['sidecar/management/app.ts']],
      ['common/contract.ts', ['sidecar/log.ts']],
    ]);
    expect(upwardImports(graph)).toEqual([
      'sidecar/nginx/control.ts → sidecar/metrics/sidecar-metrics.ts',
      'sidecar/clients/store/last-used.ts → sidecar/auth/auth-observer.ts',
      'common/contract.ts → sidecar/log.ts',
    ]);
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
