import { availableParallelism } from 'node:os';
import { type ProcSample, sampleProcs } from './proc.js';

/** Named process trees whose CPU a run accounts for: a root pid and all its descendants. */
export type ProcessRoots = Record<string, number | undefined>;

/** Cores used by each group over a run; `other` is everything else on the machine. */
export type CpuSplit = Record<string, number>;

/**
 * The CPU each process tree uses during a window of `seconds` starting `delaySeconds` from now.
 * Meant to run beside a load run and inside it: a process that exits within the window (wrk
 * at its end) would take its ticks with it.
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
  return async () => split(before, await sampleProcs(), roots());
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function split(before: ProcSample, after: ProcSample, roots: ProcessRoots): CpuSplit {
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
  let grouped = 0;
  for (const [pid, now] of after.procs) {
    const group = groupOf(pid);
    if (!group) continue;
    // A process that started during the run counts from zero.
    const used = now.ticks - (before.procs.get(pid)?.ticks ?? 0);
    ticks[group] = (ticks[group] ?? 0) + used;
    grouped += used;
  }
  // /proc/stat counts ticks of every core; a process's ticks count one core at a time. Both
  // are in USER_HZ, so dividing by the ticks of one core over the run gives "cores used".
  const cores = availableParallelism();
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
