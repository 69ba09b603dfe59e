import type { CpuSplit } from '../cpu-split.js';
import type { Figure } from './figure.js';

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
