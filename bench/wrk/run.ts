import { spawn } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { RESULT_MARK } from './lua.js';

export interface WrkResult {
  requests: number;
  seconds: number;
  rps: number;
  /** Milliseconds. */
  p50: number;
  p90: number;
  p99: number;
  p999: number;
  mean: number;
  max: number;
  /** Socket errors plus answers with status > 399: a valid run has none. */
  errors: { connect: number; read: number; write: number; status: number; timeout: number };
  /** Answers by status, when the script counts them (the flood's `response()`). */
  statuses?: Record<string, number>;
}

export interface WrkRun {
  wrk: string;
  url: string;
  headers: Record<string, string>;
  seconds: number;
  threads: number;
  connections: number;
  /** Lua source (written to `scriptDir`) and its arguments. */
  script: string;
  scriptArgs?: string[];
  scriptDir: string;
  /** Called with wrk's pid once it runs (CPU accounting). */
  onStart?: (pid: number) => void;
}

let scripts = 0;

/** One wrk run over keep-alive connections; its `done` line gives exact numbers. */
export async function runWrk(run: WrkRun): Promise<WrkResult> {
  scripts += 1;
  const scriptFile = join(run.scriptDir, `wrk-${scripts}.lua`);
  await writeFile(scriptFile, run.script);
  const args = [
    `-t${run.threads}`,
    `-c${run.connections}`,
    `-d${run.seconds}s`,
    // Far above any answer we expect; a stuck request shows as a timeout error, not a hang.
    '--timeout',
    '10s',
    '-s',
    scriptFile,
    ...Object.entries(run.headers).flatMap(([name, value]) => ['-H', `${name}: ${value}`]),
    run.url,
    ...(run.scriptArgs && run.scriptArgs.length > 0 ? ['--', ...run.scriptArgs] : []),
  ];
  const child = spawn(run.wrk, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  if (child.pid !== undefined) run.onStart?.(child.pid);
  let out = '';
  child.stdout.on('data', (d: Buffer) => {
    out += d.toString('utf8');
  });
  child.stderr.on('data', (d: Buffer) => {
    out += d.toString('utf8');
  });
  const code = await new Promise<number | null>((resolve, reject) => {
    child.on('error', reject);
    child.on('exit', (c) => resolve(c));
  });
  const line = out.split('\n').find((l) => l.startsWith(RESULT_MARK));
  if (code !== 0 || !line) throw new Error(`wrk ${args.join(' ')} failed (${code}):\n${out}`);
  const raw = JSON.parse(line.slice(RESULT_MARK.length)) as {
    requests: number;
    durationUs: number;
    errors: WrkResult['errors'];
    latencyUs: Record<'mean' | 'max' | 'p50' | 'p90' | 'p99' | 'p999', number>;
    statuses?: Record<string, number>;
  };
  const seconds = raw.durationUs / 1e6;
  const ms = (us: number) => us / 1000;
  return {
    requests: raw.requests,
    seconds,
    rps: raw.requests / seconds,
    p50: ms(raw.latencyUs.p50),
    p90: ms(raw.latencyUs.p90),
    p99: ms(raw.latencyUs.p99),
    p999: ms(raw.latencyUs.p999),
    mean: ms(raw.latencyUs.mean),
    max: ms(raw.latencyUs.max),
    errors: raw.errors,
    ...(raw.statuses ? { statuses: raw.statuses } : {}),
  };
}

/** Total of socket errors and refused answers: anything but 0 makes a run invalid. */
export function errorCount(result: WrkResult): number {
  const e = result.errors;
  return e.connect + e.read + e.write + e.status + e.timeout;
}
