import { readdirSync, readFileSync } from 'node:fs';

/** Resident memory of a process in MB, from /proc (Linux), or NaN when it cannot be read. */
export function rssMb(pid: number | undefined): number {
  if (pid === undefined) return Number.NaN;
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = Number(/^VmRSS:\s+(\d+)\s+kB/m.exec(status)?.[1]);
    return kb / 1024;
  } catch {
    return Number.NaN;
  }
}

/**
 * The private resident memory (RssAnon: not the shared zones, not the binary) of each child of
 * `parent` in MB, from /proc: an nginx master's workers, which keep their own copies of the
 * key table's records.
 */
export function childrenPrivateMb(parent: number | undefined): number[] {
  if (parent === undefined) return [];
  const out: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const status = readFileSync(`/proc/${name}/status`, 'utf8');
      if (Number(/^PPid:\s+(\d+)/m.exec(status)?.[1]) !== parent) continue;
      out.push(Number(/^RssAnon:\s+(\d+)\s+kB/m.exec(status)?.[1]) / 1024);
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

/** Samples a process's RSS every `everyMs` until stopped; returns the highest sample. */
export function rssSampler(pid: number | undefined, everyMs = 20): { stop(): number } {
  let peak = rssMb(pid);
  const timer = setInterval(() => {
    const now = rssMb(pid);
    if (now > peak) peak = now;
  }, everyMs);
  return {
    stop() {
      clearInterval(timer);
      return Math.max(peak, rssMb(pid));
    },
  };
}
