import { availableParallelism } from 'node:os';
import { type ProcSample, sampleProcs } from './proc.js';

/** Named process trees whose CPU a run accounts for: a root pid and all its descendants. */
export type ProcessRoots = Record<string, number | undefined>;

/** Cores used by each group over a run; `other` is everything else on the machine. */
export type CpuSplit = Record<string, number>;

/**
 * The CPU each process tree uses during a window of `seconds` starting `delaySeconds` from now.
 * Meant to run beside a load run and inside it: a root that exits within the window (wrk at
 * its end) would have its ticks counted for its parent's group, not its own.
 */
export async function cpuWindow(
  roots: () => ProcessRoots,
  delaySeconds: number,
  seconds: number,
): Promise<CpuSplit> {
  await sleep(delaySeconds * 1000);
  const stop = await cpuMeter(roots);
  await sleep(seconds * 1000);
  return stop();
}

/** Starts measuring now; the function returned gives the split from now until it is called. */
export async function cpuMeter(roots: () => ProcessRoots): Promise<() => Promise<CpuSplit>> {
  const before = await sampleProcs();
  return async () => splitSamples(before, await sampleProcs(), roots());
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Pure: the cores each root's tree used between two samples. A process that ended inside the
 * window (a curl the bench ran, a PostgreSQL backend that closed) is no longer in `after`, but
 * its parent's `reaped` grew by everything it ever used: that growth counts for the parent's
 * group, less what the process had used before the window (its ticks in `before`). Without
 * this its CPU fell into `other` and marked the bench's own rows disturbed.
 */
export function splitSamples(
  before: ProcSample,
  after: ProcSample,
  roots: ProcessRoots,
  cores: number = availableParallelism(),
): CpuSplit {
  const byRoot = new Map<number, string>();
  for (const [name, pid] of Object.entries(roots)) if (pid !== undefined) byRoot.set(pid, name);
  // A process belongs to the nearest ancestor that is a root (nginx workers to their master,
  // PostgreSQL backends to the postmaster, the sidecar to itself rather than its runner).
  const groupOf = (pid: number): string | undefined => {
    for (let p = pid, hops = 0; p > 1 && hops < 64; hops += 1) {
      const name = byRoot.get(p);
      if (name) return name;
      p = after.procs.get(p)?.ppid ?? before.procs.get(p)?.ppid ?? 0;
    }
    return undefined;
  };
  const ticks: Record<string, number> = {};
  const add = (group: string | undefined, n: number) => {
    if (group) ticks[group] = (ticks[group] ?? 0) + n;
  };
  for (const [pid, now] of after.procs) {
    const was = before.procs.get(pid);
    // A process that started during the run counts from zero.
    add(groupOf(pid), now.ticks + now.reaped - (was ? was.ticks + was.reaped : 0));
  }
  for (const [pid, was] of before.procs) {
    if (after.procs.has(pid)) continue;
    // Ended inside the window: its parent's reaped growth holds its whole life.
    add(groupOf(was.ppid), -(was.ticks + was.reaped));
  }
  let grouped = 0;
  for (const name of Object.keys(ticks)) {
    ticks[name] = Math.max(0, ticks[name]!);
    grouped += ticks[name]!;
  }
  // /proc/stat counts ticks of every core; a process's ticks count one core at a time. Both
  // are in USER_HZ, so dividing by the ticks of one core over the run gives "cores used".
  const perCore = (after.total - before.total) / cores;
  const toCores = (t: number) => (perCore > 0 ? round2(t / perCore) : 0);
  const out: CpuSplit = {};
  for (const name of Object.keys(roots)) out[name] = toCores(ticks[name] ?? 0);
  const busy = after.busy - before.busy;
  out.other = toCores(Math.max(0, busy - grouped));
  out.idle = toCores(Math.max(0, after.total - before.total - busy));
  return out;
}

const round2 = (n: number) => Math.round(n * 100) / 100;
