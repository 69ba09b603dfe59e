import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { availableParallelism, loadavg, release, totalmem } from 'node:os';
import { promisify } from 'node:util';
import { locateNginx } from '../native/nginx.js';

const run = promisify(execFile);

export interface Machine {
  cpu: string;
  cores: number;
  memoryGb: number;
  kernel: string;
  node: string;
  nginx: string;
  wrk: string;
  postgres: string;
  /** 1, 5 and 15 minute load averages when the run started: other work on the machine. */
  loadAverage: number[];
}

async function output(command: string, args: string[]): Promise<string> {
  try {
    const { stdout, stderr } = await run(command, args, { timeout: 10_000 });
    return `${stdout}${stderr}`;
  } catch (err) {
    // wrk -v exits with 1 after printing its version.
    const e = err as { stdout?: string; stderr?: string };
    return `${e.stdout ?? ''}${e.stderr ?? ''}`;
  }
}

export async function describeMachine(wrk: string, postgres: string): Promise<Machine> {
  const cpuinfo = await readFile('/proc/cpuinfo', 'utf8').catch(() => '');
  const nginx = await output(locateNginx(process.env), ['-v']);
  const wrkVersion = await output(wrk, ['-v']);
  return {
    cpu: /^model name\s*:\s*(.+)$/m.exec(cpuinfo)?.[1]?.trim() ?? 'unknown',
    cores: availableParallelism(),
    memoryGb: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    kernel: release(),
    node: process.version,
    nginx: /nginx\/(\S+)/.exec(nginx)?.[1] ?? nginx.trim(),
    wrk: /^wrk (\S+)/m.exec(wrkVersion)?.[1] ?? wrkVersion.split('\n', 1)[0]!.trim(),
    postgres,
    loadAverage: loadavg().map((n) => Math.round(n * 100) / 100),
  };
}
