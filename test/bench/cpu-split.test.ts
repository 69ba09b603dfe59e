import { describe, expect, test } from 'vitest';
import { splitSamples } from '../../bench/cpu-split.js';
import { type ProcSample, sampleProcs } from '../../bench/proc.js';

type Proc = { ppid: number; ticks: number; reaped?: number };

/** A sample of the given processes; the machine's counters as given (ticks of all cores). */
function sample(procs: Record<number, Proc>, busy: number, total: number): ProcSample {
  return {
    procs: new Map(
      Object.entries(procs).map(([pid, p]) => [
        Number(pid),
        { ppid: p.ppid, ticks: p.ticks, reaped: p.reaped ?? 0, comm: `p${pid}` },
      ]),
    ),
    busy,
    total,
  };
}

// Two cores, 100 ticks each over the window: 200 ticks in all, so 100 ticks are one core.
const BEFORE_TOTAL = 1000;
const AFTER_TOTAL = 1200;

describe('splitSamples: CPU per process tree between two samples', () => {
  test('a child that ran and ended inside the window counts for its parent, not for other', () => {
    // 10: the bench (a root); 20: a curl it started and waited for after 40 ticks.
    const before = sample({ 10: { ppid: 1, ticks: 100 } }, 500, BEFORE_TOTAL);
    const after = sample({ 10: { ppid: 1, ticks: 110, reaped: 40 } }, 550, AFTER_TOTAL);
    const split = splitSamples(before, after, { bench: 10 }, 2);
    expect(split.bench).toBe(0.5); // 10 of its own + 40 of the curl = 50 ticks
    expect(split.other).toBe(0);
    expect(split.idle).toBe(1.5);
  });

  test('a child alive at the start that ended inside counts only its ticks inside the window', () => {
    // 20 had used 300 ticks before the window, 30 more inside it, then ended: its parent's
    // reaped grew by its whole life (330).
    const before = sample(
      { 10: { ppid: 1, ticks: 100 }, 20: { ppid: 10, ticks: 300 } },
      500,
      BEFORE_TOTAL,
    );
    const after = sample({ 10: { ppid: 1, ticks: 100, reaped: 330 } }, 530, AFTER_TOTAL);
    const split = splitSamples(before, after, { postgres: 10 }, 2);
    expect(split.postgres).toBe(0.3);
    expect(split.other).toBe(0);
  });

  test('children alive at both samples count for the nearest root among their ancestors', () => {
    // 10 runner → 11 sidecar (a root of its own) → 12 a thread-like child; 30 foreign.
    const before = sample(
      {
        10: { ppid: 1, ticks: 5 },
        11: { ppid: 10, ticks: 100 },
        12: { ppid: 11, ticks: 50 },
        30: { ppid: 1, ticks: 0 },
      },
      500,
      BEFORE_TOTAL,
    );
    const after = sample(
      {
        10: { ppid: 1, ticks: 5 },
        11: { ppid: 10, ticks: 160 },
        12: { ppid: 11, ticks: 70 },
        30: { ppid: 1, ticks: 20 },
      },
      600,
      AFTER_TOTAL,
    );
    const split = splitSamples(before, after, { runner: 10, sidecar: 11 }, 2);
    expect(split.sidecar).toBe(0.8);
    expect(split.runner).toBe(0);
    // The foreign process's 20 ticks are what is left of the machine's 100 busy ticks.
    expect(split.other).toBe(0.2);
  });

  test('a process that started inside the window counts from zero; a foreign one stays other', () => {
    const before = sample({ 10: { ppid: 1, ticks: 0 } }, 500, BEFORE_TOTAL);
    const after = sample(
      { 10: { ppid: 1, ticks: 0 }, 21: { ppid: 10, ticks: 30 }, 40: { ppid: 1, ticks: 45 } },
      575,
      AFTER_TOTAL,
    );
    const split = splitSamples(before, after, { bench: 10 }, 2);
    expect(split.bench).toBe(0.3);
    expect(split.other).toBe(0.45);
  });
});

describe('sampleProcs: the real /proc', () => {
  test('finds this process under its parent, with its name, and the CPU it then spends', async () => {
    const before = await sampleProcs();
    const me = before.procs.get(process.pid);
    expect(me?.ppid).toBe(process.ppid);
    expect(me?.comm.length).toBeGreaterThan(0);
    // 100 ms of this process's own CPU (ten clock ticks), however busy the machine is.
    const start = process.cpuUsage();
    while (process.cpuUsage(start).user < 100_000) Math.sqrt(Math.random());
    const after = await sampleProcs();
    expect(after.procs.get(process.pid)!.ticks).toBeGreaterThan(me!.ticks);
    expect(after.total).toBeGreaterThan(before.total);
    expect(after.busy).toBeGreaterThan(before.busy);
  });
});
