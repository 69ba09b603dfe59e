import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { describe, expect, test } from 'vitest';

// The documentation travels with the repository: a clone has no sibling folders, so README.md and
// docs/ may point only at files of the repository itself, and every such link must resolve
// (anchors included) when the Markdown is read on a forge or in an editor.
// Not under test/unit on purpose: a change there makes the mutation run test every static
// mutant again, and this covers no mutated code.

const ROOT = resolve(import.meta.dirname, '../..');

/** Every file under `dir` (relative to the repository), as paths relative to the repository. */
function filesUnder(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => relative(ROOT, join(entry.parentPath, entry.name)))
    .sort();
}

const DOCS = filesUnder('docs');
/** The READMEs beside the code (the engine's, the bench's method notes). */
const READMES = ['engine/README.md', 'bench/README.md'];
/** The Markdown whose links are checked: the README, everything under docs/, the other READMEs. */
const MARKDOWN = ['README.md', ...READMES, ...DOCS.filter((f) => f.endsWith('.md'))];

/** A path into the folder beside the clone, or into the files that lived there. */
const SIBLING_FOLDER =
  /\.\.\/shared\b|\bshared\/(?:spec\b|ARCHITECTURE\.md|containers\.md|STYLE\.md)/;

/** Folders that a clone does not have (built or installed), so a link into them is broken. */
const NOT_IN_A_CLONE = ['node_modules', 'dist', '.gateway'];

/** The text with code blocks and code spans blanked (line numbers kept): no links live there. */
function withoutCode(text: string): string {
  let fence: string | null = null;
  return text
    .split('\n')
    .map((line) => {
      const marker = /^\s*(`{3,}|~{3,})/.exec(line)?.[1];
      if (fence !== null) {
        if (marker !== undefined && marker[0] === fence[0] && marker.length >= fence.length) {
          fence = null;
        }
        return '';
      }
      if (marker !== undefined) {
        fence = marker;
        return '';
      }
      return line.replace(/(`+)(?:(?!\1).)+?\1/g, '').replace(/<!--.*?-->/g, '');
    })
    .join('\n');
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens. */
function slug(heading: string): string {
  return heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/`([^`]*)`/g, '$1')
    .replace(/<[^>]+>/g, '')
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

/** The anchors a Markdown text offers: its headings' (numbered when repeated) and explicit ids. */
function anchorsOf(text: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  let fence: string | null = null;
  for (const line of text.split('\n')) {
    const marker = /^\s*(`{3,}|~{3,})/.exec(line)?.[1];
    if (fence !== null) {
      if (marker !== undefined && marker[0] === fence[0] && marker.length >= fence.length) {
        fence = null;
      }
      continue;
    }
    if (marker !== undefined) {
      fence = marker;
      continue;
    }
    const heading = /^ {0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)?.[1];
    if (heading !== undefined) {
      const base = slug(heading);
      const n = seen.get(base) ?? 0;
      seen.set(base, n + 1);
      anchors.add(n === 0 ? base : `${base}-${n}`);
    }
    for (const match of line.matchAll(/<a\s+(?:name|id)="([^"]+)"/g)) anchors.add(match[1]!);
  }
  return anchors;
}

interface Link {
  line: number;
  target: string;
}

/** Inline links and images, and reference definitions, outside code. */
function linksOf(text: string): Link[] {
  const links: Link[] = [];
  withoutCode(text)
    .split('\n')
    .forEach((line, i) => {
      for (const m of line.matchAll(/!?\[[^\]]*\]\(\s*(<[^>]*>|[^)\s]+)(?:\s+"[^"]*")?\s*\)/g)) {
        links.push({ line: i + 1, target: m[1]!.replace(/^<|>$/g, '') });
      }
      const definition = /^ {0,3}\[[^\]]+\]:\s*(\S+)/.exec(line);
      if (definition) links.push({ line: i + 1, target: definition[1]!.replace(/^<|>$/g, '') });
    });
  return links;
}

/**
 * Why `target`, a link in the Markdown file `file` (relative to `root`), does not lead to a file
 * of the repository (and, for `#anchor`, to a heading of that file); null when it does or when
 * it is external. `read` gives a repository file's text, for anchors.
 */
function brokenBecause(
  root: string,
  file: string,
  target: string,
  read: (path: string) => string,
): string | null {
  if (/^(?:https?|mailto):/i.test(target)) return null;
  if (/^[a-z][a-z0-9+.-]*:/i.test(target)) return 'not a link into the repository';
  const hash = target.indexOf('#');
  const pathPart = (hash < 0 ? target : target.slice(0, hash)).replace(/\?.*$/, '');
  const anchor = hash < 0 ? null : target.slice(hash + 1);
  let path: string;
  try {
    path = decodeURIComponent(pathPart);
  } catch {
    return 'the path is not valid percent-encoding';
  }
  const absolute =
    path === ''
      ? join(root, file)
      : path.startsWith('/')
        ? join(root, path)
        : resolve(root, dirname(file), path);
  const inRepo = relative(root, absolute);
  if (inRepo.startsWith('..') || resolve(root, inRepo) !== absolute) {
    return 'leads outside the repository';
  }
  if (NOT_IN_A_CLONE.includes(inRepo.split(sep)[0]!)) return 'leads into a folder a clone lacks';
  if (!existsSync(absolute)) return 'no such file';
  if (anchor === null || anchor === '') return null;
  if (statSync(absolute).isDirectory() || !absolute.endsWith('.md')) {
    return 'an anchor into something that is not Markdown';
  }
  const wanted = decodeURIComponent(anchor).toLowerCase();
  return anchorsOf(read(inRepo)).has(wanted) ? null : `no heading #${anchor}`;
}

const readText = (path: string) => readFileSync(join(ROOT, path), 'utf8');

describe('the documentation stands on its own', () => {
  test('the files checked include the README and the docs', () => {
    expect(MARKDOWN).toContain('README.md');
    expect(MARKDOWN).toContain('docs/architecture.md');
    expect(MARKDOWN.filter((f) => f.startsWith('docs/decisions/')).length).toBeGreaterThan(10);
  });

  test.each(['README.md', ...READMES, ...DOCS])('%s does not point at ../shared', (file) => {
    const text = readFileSync(join(ROOT, file), 'latin1');
    const lines = text
      .split('\n')
      .map((line, i) => `${file}:${i + 1}: ${line}`)
      .filter((line) => SIBLING_FOLDER.test(line.slice(line.indexOf(': ') + 2)));
    expect(lines).toEqual([]);
  });

  test.each(MARKDOWN)('every relative link of %s resolves', (file) => {
    const problems = linksOf(readText(file)).flatMap(({ line, target }) => {
      const why = brokenBecause(ROOT, file, target, readText);
      return why === null ? [] : [`${file}:${line}: ${target}: ${why}`];
    });
    expect(problems).toEqual([]);
  });
});

describe('the link check itself', () => {
  const files: Record<string, string> = {
    'docs/a.md': "# Title\n\n## A request's path\n\n## Same\n\n## Same\n",
  };
  const read = (path: string) => files[path] ?? readText(path);
  const why = (target: string) => brokenBecause(ROOT, 'docs/x.md', target, read);

  test('finds links outside code, and none inside it', () => {
    const text = [
      'See [one](a.md) and ![two](img.png "title").',
      '`[not](a link)` and',
      '```',
      '[not](either.md)',
      '```',
      '[ref]: <b.md>',
    ].join('\n');
    expect(linksOf(text)).toEqual([
      { line: 1, target: 'a.md' },
      { line: 1, target: 'img.png' },
      { line: 6, target: 'b.md' },
    ]);
  });

  test('a link to a missing file, outside the repository or to a missing heading is broken', () => {
    expect(why('no-such-file.md')).toBe('no such file');
    expect(why('../../shared/spec/gateway.md')).toBe('leads outside the repository');
    expect(why('../dist/sidecar/main.js')).toBe('leads into a folder a clone lacks');
    expect(why('architecture.md#no-such-heading')).toBe('no heading #no-such-heading');
    expect(why('../README.md#quick-start-fresh-debian-12-machine')).toBeNull();
    expect(why('../bench/README.md#the-miss-path-rows')).toBeNull();
    expect(why('architecture.md#a-requests-path')).toBeNull();
    expect(why('decisions/')).toBeNull();
    expect(why('https://example.com/')).toBeNull();
  });

  test('anchors follow headings as GitHub makes them, repeated ones numbered', () => {
    expect([...anchorsOf(files['docs/a.md']!)]).toEqual([
      'title',
      'a-requests-path',
      'same',
      'same-1',
    ]);
    expect(slug('`failure_budget` (per key id)')).toBe('failure_budget-per-key-id');
    expect(slug('[Decision](x.md): nginx ↔ sidecar')).toBe('decision-nginx--sidecar');
  });
});
