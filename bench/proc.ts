import { readdir, readFile } from 'node:fs/promises';

export interface ProcSample {
  /**
   * pid → parent pid, CPU ticks (user + system) so far, and the ticks of its children that
   * ended and were waited for (cutime + cstime: where a child's CPU goes once it is gone).
   */
  procs: Map<number, { ppid: number; ticks: number; reaped: number; comm: string }>;
  /** Busy and total ticks of the whole machine (/proc/stat, every core). */
  busy: number;
  total: number;
}

/** Reads every process's CPU ticks and the machine's, for a before/after difference. */
export async function sampleProcs(): Promise<ProcSample> {
  const procs: ProcSample['procs'] = new Map();
  const pids = (await readdir('/proc')).filter((name) => /^\d+$/.test(name));
  await Promise.all(
    pids.map(async (name) => {
      const stat = await readFile(`/proc/${name}/stat`, 'utf8').catch(() => null);
      if (!stat) return;
      // The command name is in parentheses and may contain spaces: split after the last ')'.
      const close = stat.lastIndexOf(')');
      const comm = stat.slice(stat.indexOf('(') + 1, close);
      const fields = stat.slice(close + 2).split(' ');
      // After the name: state(0) ppid(1) ... utime(11) stime(12) cutime(13) cstime(14).
      procs.set(Number(name), {
        ppid: Number(fields[1]),
        ticks: Number(fields[11]) + Number(fields[12]),
        reaped: Number(fields[13]) + Number(fields[14]),
        comm,
      });
    }),
  );
  const cpu = (await readFile('/proc/stat', 'utf8')).split('\n', 1)[0]!.trim().split(/\s+/);
  const n = cpu.slice(1).map(Number);
  // user nice system idle iowait irq softirq steal (guest is already inside user).
  const idle = (n[3] ?? 0) + (n[4] ?? 0);
  const total = n.slice(0, 8).reduce((a, b) => a + b, 0);
  return { procs, busy: total - idle, total };
}
