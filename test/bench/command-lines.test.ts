import { spawn } from 'node:child_process';
import { describe, expect, test } from 'vitest';
import {
  measuredCommandLines,
  plainCommandLines,
  readCommandLine,
  unexpectedNodeFlags,
} from '../../bench/stack/command-lines.js';

const line = (name: string, argv: string[]) => ({ name, pid: 42, argv });

describe('the bench refuses measured Node processes that run with runtime flags', () => {
  test('node with only its script passes; other programs are not judged', () => {
    expect(
      unexpectedNodeFlags([
        line('sidecar A', ['/usr/bin/node', '/work/dist/sidecar/main.js']),
        line('engine A', ['node', 'dist/engine/main.js', '--not-a-node-flag']),
        line('postgres', ['/opt/pg/bin/postgres', '-D', '/tmp/data', '-c', 'fsync=off']),
        line('nginx A', ['nginx', '-p', '/tmp/a', '-c', 'nginx.conf']),
      ]),
    ).toEqual([]);
  });

  test('a profiling flag before the script is named, with the whole command line', () => {
    expect(
      unexpectedNodeFlags([
        line('sidecar A', ['/usr/bin/node', '--perf-basic-prof', '/w/dist/sidecar/main.js']),
        line('engine B', ['/usr/local/bin/node24', '--inspect', 'x.js']),
        line('sidecar B', ['/usr/bin/nodejs', '--prof']),
      ]),
    ).toEqual([
      'sidecar A (pid 42) runs /usr/bin/node --perf-basic-prof /w/dist/sidecar/main.js',
      'engine B (pid 42) runs /usr/local/bin/node24 --inspect x.js',
      'sidecar B (pid 42) runs /usr/bin/nodejs --prof',
    ]);
  });

  test("a live process's command line is read from /proc, and a gone one is left out", async () => {
    // A harmless flag: --perf-basic-prof itself would leave map and log files behind.
    const child = spawn(process.execPath, ['--no-warnings', '-e', 'setTimeout(() => {}, 30000)']);
    try {
      await new Promise((resolve) => child.once('spawn', resolve));
      const pid = child.pid!;
      expect(readCommandLine('probe', pid)?.argv).toEqual([
        process.execPath,
        '--no-warnings',
        '-e',
        'setTimeout(() => {}, 30000)',
      ]);
      const lines = measuredCommandLines({ probe: pid, gone: 2 ** 22 + 1, unknown: undefined });
      expect(lines.map((l) => l.name)).toEqual(['probe']);
      expect(unexpectedNodeFlags(lines)).toHaveLength(1);
      expect(() => plainCommandLines({ probe: pid })).toThrow(
        /probe \(pid \d+\) runs .* --no-warnings -e .*rm -rf dist && npm run build/,
      );
    } finally {
      child.kill('SIGKILL');
    }
  });
});
