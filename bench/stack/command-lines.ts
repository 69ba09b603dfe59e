import { readFileSync } from 'node:fs';
import { basename } from 'node:path';

/** A measured process and the arguments it runs with (`/proc/<pid>/cmdline`). */
export interface CommandLine {
  name: string;
  pid: number;
  argv: string[];
}

/** What a measured process runs with, or null once it is gone. */
export function readCommandLine(name: string, pid: number): CommandLine | null {
  try {
    const raw = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    return { name, pid, argv: raw.split('\0').filter((a) => a !== '') };
  } catch {
    return null;
  }
}

/**
 * The Node processes the bench measures must run as `npm start` runs them: `node <script>`,
 * with no runtime flag. A profiling flag (`--perf-basic-prof`, `--prof`, `--inspect`) costs
 * CPU on the paths measured, and dist/ is where it can hide: the build is incremental, so a
 * hand-edited compiled file stays as it is until its source changes. On 2026-11-27 the
 * sidecar of every run from 01:45 to 09:31 ran with `--perf-basic-prof` that way, unseen.
 * Returns what is wrong, one line per process; empty when every process is as expected.
 */
export function unexpectedNodeFlags(lines: readonly CommandLine[]): string[] {
  return lines.flatMap((line) => {
    const [command, ...args] = line.argv;
    if (!command || !/^node(js)?(\d+)?$/.test(basename(command))) return [];
    const script = args.findIndex((a) => !a.startsWith('-'));
    const flags = script === -1 ? args : args.slice(0, script);
    return flags.length === 0 ? [] : [`${line.name} (pid ${line.pid}) runs ${line.argv.join(' ')}`];
  });
}

/** The command lines of a run's named processes (`BenchStack.roots`), those still running. */
export function measuredCommandLines(roots: Record<string, number | undefined>): CommandLine[] {
  return Object.entries(roots).flatMap(([name, pid]) => {
    const line = pid === undefined ? null : readCommandLine(name, pid);
    return line ? [line] : [];
  });
}

/**
 * The command lines of `roots`, for the results file; throws when a Node process among them
 * runs with a runtime flag (see `unexpectedNodeFlags`), before anything is measured.
 */
export function plainCommandLines(roots: Record<string, number | undefined>): CommandLine[] {
  const lines = measuredCommandLines(roots);
  const flagged = unexpectedNodeFlags(lines);
  if (flagged.length > 0) {
    throw new Error(
      `a measured process runs with Node flags (a profiling edit left in dist/?): ${flagged.join('; ')}. Rebuild from source: rm -rf dist && npm run build`,
    );
  }
  return lines;
}
