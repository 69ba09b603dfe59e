import { execFile } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { CpuSplit } from '../cpu-split.js';
import type { Figure } from './figures.js';

/**
 * The one writer from figures to what a reader sees: the printed table with its notes and
 * verdict, and the results file (`<dir>/<timestamp>.json`) in the repository's JSON format.
 */

const run = promisify(execFile);

const num = (n: number | null, digits: number) =>
  n === null || !Number.isFinite(n) ? '-' : n.toFixed(digits);

/** The table as text: one line per figure, then the notes that explain each measurement. */
export function formatTable(rows: Figure[]): string {
  const header = ['figure', 'measured', 'target', 'result', 'req/s', 'p50 ms', 'p99 ms', 'ratio'];
  const cells = rows.map((r) => [
    r.figure,
    `${num(r.measured, r.unit === 'ratio' ? 3 : r.unit === 'req/s' ? 0 : 2)} ${r.unit === 'ratio' ? '' : r.unit}`.trim(),
    r.target,
    // A '?' marks a figure measured while other processes took CPU: noise, not a verdict.
    `${r.pass === null ? '' : r.pass ? 'PASS' : 'FAIL'}${r.disturbed ? '?' : ''}`,
    num(r.rps, 0),
    num(r.p50, 2),
    num(r.p99, 2),
    num(r.ratio, 3),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i]!.length)));
  const line = (c: string[]) =>
    c
      .map((x, i) => (i === 0 || i === 2 ? x.padEnd(widths[i]!) : x.padStart(widths[i]!)))
      .join('  ');
  const out = [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...cells.map(line)];
  out.push('', 'notes:');
  for (const r of rows) out.push(`  ${r.id}: ${r.note}`);
  return out.join('\n');
}

/** "wrk 0.31, nginx A 0.72, ..." in cores, biggest first; idle last. */
export function formatCpu(cpu: CpuSplit | null): string {
  if (!cpu) return '-';
  const { idle, ...used } = cpu;
  return `${Object.entries(used)
    .filter(([, v]) => v >= 0.01)
    .sort((a, b) => b[1] - a[1])
    .map(([k, v]) => `${k} ${v.toFixed(2)}`)
    .join(', ')}; idle ${(idle ?? 0).toFixed(2)}`;
}

/** One line: how many targets were met, and which were not (a row without a number never is). */
export function formatVerdict(rows: Figure[]): string {
  const judged = rows.filter((r) => r.pass !== null);
  const missed = judged.filter((r) => !r.pass);
  const unmeasured = rows.filter((r) => !Number.isFinite(r.measured)).map((r) => r.id);
  return (
    `targets met: ${judged.length - missed.length} of ${judged.length}` +
    (missed.length > 0 ? `; missed: ${missed.map((r) => r.id).join(', ')}` : '') +
    (unmeasured.length > 0 ? `; not measured: ${unmeasured.join(', ')}` : '')
  );
}

/** The commit measured, and whether the code that decides performance had local changes. */
export async function codeVersion(
  root: string,
): Promise<{ commit: string; uncommitted: string[] }> {
  try {
    const { stdout: commit } = await run('git', ['rev-parse', 'HEAD'], { cwd: root });
    const { stdout: status } = await run(
      'git',
      ['status', '--porcelain', '--', 'templates', 'generator', 'sidecar', 'engine', 'native'],
      { cwd: root },
    );
    return {
      commit: commit.trim(),
      uncommitted: status
        .split('\n')
        .map((l) => l.trim())
        .filter(Boolean),
    };
  } catch {
    return { commit: 'unknown (not a git checkout)', uncommitted: [] };
  }
}

/**
 * Writes `<dir>/<timestamp>.json` and returns its path. One file per run: the newest is the
 * last by name (the timestamps sort), so no copy of it is kept beside.
 */
export async function writeResults(dir: string, startedAt: Date, data: unknown): Promise<string> {
  await mkdir(dir, { recursive: true });
  const file = join(dir, `${startedAt.toISOString().replace(/[:.]/g, '-')}.json`);
  await writeFile(file, formatJson(data));
  return file;
}

/**
 * JSON as the repository's formatter (biome, line width 100) writes it, so a results file can
 * be committed as the bench wrote it and `biome ci` stays clean: objects one key per line,
 * arrays of plain values on one line when they fit, anything else one item per line.
 */
export function formatJson(value: unknown): string {
  return `${format(value, '', 0)}\n`;
}

const WIDTH = 100;

function isPlain(value: unknown): boolean {
  return value === null || typeof value !== 'object';
}

/** `used`: characters already on the line before this value (indent, key, colon). */
function format(value: unknown, indent: string, used: number): string {
  if (isPlain(value)) return JSON.stringify(value) ?? 'null';
  const inner = `${indent}  `;
  if (Array.isArray(value)) {
    if (value.length === 0) return '[]';
    if (value.every(isPlain)) {
      const line = `[${value.map((v) => JSON.stringify(v) ?? 'null').join(', ')}]`;
      // +1: the comma that may follow on the same line.
      if (used + line.length + 1 <= WIDTH) return line;
    }
    const items = value.map((v) => `${inner}${format(v, inner, inner.length)}`);
    return `[\n${items.join(',\n')}\n${indent}]`;
  }
  const entries = Object.entries(value as Record<string, unknown>).filter(
    ([, v]) => v !== undefined && typeof v !== 'function',
  );
  if (entries.length === 0) return '{}';
  const lines = entries.map(([k, v]) => {
    const head = `${inner}${JSON.stringify(k)}: `;
    return `${head}${format(v, inner, head.length)}`;
  });
  return `{\n${lines.join(',\n')}\n${indent}}`;
}
