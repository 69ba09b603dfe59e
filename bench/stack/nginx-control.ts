import { readdir, readFile } from 'node:fs/promises';
import { gatewayHome } from '../../native/home.js';
import {
  type KeyTableState,
  type LuaCounters,
  NginxKeyTable,
  readLuaCounters,
} from '../../sidecar/nginx/index.js';

/**
 * What the bench reads from a gateway's nginx besides its answers: the Lua counters and the key
 * table's state through the sidecar's own control-socket client (sidecar/nginx/), and the
 * shared memory nginx mapped (/proc). Every read gives null when nginx has no such thing (an
 * nginx from before the key table answers 404): rows then say so instead of failing.
 */

export type { LuaCounters };

/** The control socket of a native gateway started in `home`. */
export const controlSocketOf = (home: string) => gatewayHome(home).controlSocket;

/**
 * Each nginx worker adds its counts to the shared ones about once a second (lua/gateway/
 * metrics.lua's timer): a read this long after the last request counts every request before it.
 */
export const COUNTER_FLUSH_MS = 1_200;

/** The Lua counters once every request so far is in them (COUNTER_FLUSH_MS after the last). */
export async function flushedCounters(socket: string): Promise<LuaCounters | null> {
  await new Promise((r) => setTimeout(r, COUNTER_FLUSH_MS));
  return readLuaCounters(socket, 2_000);
}

/** Pure: what each counter grew by from `before` to `after` (a counter absent counts 0). */
export function counterGrowth(
  before: LuaCounters | null,
  after: LuaCounters | null,
): LuaCounters | null {
  if (!before || !after) return null;
  const out: LuaCounters = {};
  for (const key of new Set([...Object.keys(before), ...Object.keys(after)])) {
    const grown = (after[key] ?? 0) - (before[key] ?? 0);
    if (grown !== 0) out[key] = grown;
  }
  return out;
}

/** nginx's key-table state with the bytes of its dict in use (capacity − free: slab pages). */
export type BenchKeyTable = KeyTableState & { capacityBytes: number; usedBytes: number };

/** Pure: the state with its used bytes, or null when nginx gave no capacity to compare. */
export function withUsedBytes(state: KeyTableState): BenchKeyTable | null {
  const { capacityBytes, freeBytes } = state;
  if (capacityBytes === null || freeBytes === null) return null;
  return { ...state, capacityBytes, usedBytes: capacityBytes - freeBytes };
}

/** The key table's state, or null when this nginx holds none (or does not answer). */
export async function keyTableState(socket: string): Promise<BenchKeyTable | null> {
  const answer = await new NginxKeyTable(socket).state();
  return answer.kind === 'state' ? withUsedBytes(answer.state) : null;
}

/**
 * Waits until nginx's replica is complete and holds at least `records` records, and its count
 * has stopped moving (two reads 300 ms apart agree): the rows inserted by SQL have all reached
 * nginx through the change feed. Gives the last state read (null: no key table, nothing to wait
 * for) and the seconds waited; `settled` false when `timeoutMs` passed first, or at once when the
 * replica is complete but full (it asks about what it could not hold).
 */
export async function waitForKeyTable(
  socket: string,
  records: number,
  timeoutMs: number,
): Promise<{ state: BenchKeyTable | null; seconds: number; settled: boolean }> {
  const started = performance.now();
  let last = await keyTableState(socket);
  if (!last) return { state: null, seconds: 0, settled: true };
  for (;;) {
    await new Promise((r) => setTimeout(r, 300));
    const now = await keyTableState(socket);
    const seconds = (performance.now() - started) / 1000;
    if (!now) return { state: last, seconds, settled: false };
    const done = now.phase === 'complete' && now.records >= records && now.records === last.records;
    // A full replica holds what it could and asks about the rest: no more records will come.
    const full = now.phase === 'complete' && now.full;
    last = now;
    if (done) return { state: now, seconds, settled: true };
    if (full) return { state: now, seconds, settled: false };
    if (performance.now() - started > timeoutMs) return { state: now, seconds, settled: false };
  }
}

/**
 * Waits until nginx's workers have swept the key table into their own copies
 * (docs/decisions/20261129-worker-copies-kept.md): the module's `module_copied` count no longer
 * grows over SWEEP_QUIET_MS (the sweeps tick every second while idle). Gives what they copied
 * and the seconds waited; `settled` false when `timeoutMs` passed first, and at once (copied 0)
 * for an nginx that does not count copies.
 */
export async function waitForSweep(
  socket: string,
  timeoutMs: number,
): Promise<{ copied: number; seconds: number; settled: boolean }> {
  const started = performance.now();
  const read = async () => (await readLuaCounters(socket, 2_000))?.module_copied;
  let last = await read();
  if (last === undefined) return { copied: 0, seconds: 0, settled: true };
  for (;;) {
    await new Promise((r) => setTimeout(r, SWEEP_QUIET_MS));
    const now: number = (await read()) ?? last;
    const seconds = (performance.now() - started) / 1000;
    if (now === last) return { copied: now, seconds, settled: true };
    last = now;
    if (performance.now() - started > timeoutMs) return { copied: now, seconds, settled: false };
  }
}

/** Longer than the sweeps' idle tick (1 s), so that a quiet count is a finished sweep. */
const SWEEP_QUIET_MS = 2_500;

/** One shared-memory mapping of nginx (a zone: a shared dict, the decision cache, ...). */
export interface SharedMapping {
  sizeKb: number;
  rssKb: number;
}

/**
 * Pure: nginx's shared zones in a /proc/<pid>/smaps text. nginx maps each zone as shared
 * anonymous memory, which the kernel names `/dev/zero (deleted)` (or `SYSV...` for System V
 * shm); everything else (libraries, heap, stacks) is left out.
 */
export function sharedMappings(smaps: string): SharedMapping[] {
  const out: SharedMapping[] = [];
  let current: SharedMapping | null = null;
  for (const line of smaps.split('\n')) {
    const head = /^[0-9a-f]+-[0-9a-f]+ (\S{4}) \S+ \S+ \d+\s*(.*)$/.exec(line);
    if (head) {
      const [, perms, path] = head;
      const shared = perms!.endsWith('s') && /^(\/dev\/zero \(deleted\)|\/SYSV)/.test(path!);
      current = shared ? { sizeKb: 0, rssKb: 0 } : null;
      if (current) out.push(current);
      continue;
    }
    if (!current) continue;
    const field = /^(Size|Rss):\s+(\d+) kB$/.exec(line);
    if (field?.[1] === 'Size') current.sizeKb = Number(field[2]);
    if (field?.[1] === 'Rss') current.rssKb = Number(field[2]);
  }
  return out;
}

/**
 * nginx's shared memory, from /proc: every zone's size (what nginx reserved) and, per zone, the
 * largest resident part any of its processes has touched (a page a worker wrote is resident in
 * that worker's map; the master touches little after start). In MB; null without /proc access.
 */
export async function nginxSharedMemory(
  masterPid: number | undefined,
): Promise<{ zones: { sizeMb: number; residentMb: number }[]; totalMb: number } | null> {
  if (masterPid === undefined) return null;
  const pids = [masterPid, ...(await childrenOf(masterPid))];
  const perPid: SharedMapping[][] = [];
  for (const pid of pids) {
    const text = await readFile(`/proc/${pid}/smaps`, 'utf8').catch(() => null);
    if (text !== null) perPid.push(sharedMappings(text));
  }
  const first = perPid[0];
  if (!first) return null;
  const zones = first.map((zone, i) => ({
    sizeMb: zone.sizeKb / 1024,
    residentMb: Math.max(...perPid.map((m) => m[i]?.rssKb ?? 0)) / 1024,
  }));
  return { zones, totalMb: zones.reduce((a, z) => a + z.sizeMb, 0) };
}

/**
 * The private resident memory (RssAnon: not the shared zones, not the binary) of each of an
 * nginx master's children in MB, from /proc: its workers, which keep their own copies of the
 * key table's records. [] without /proc access.
 */
export async function nginxWorkersPrivateMb(masterPid: number | undefined): Promise<number[]> {
  if (masterPid === undefined) return [];
  const out: number[] = [];
  for (const pid of await childrenOf(masterPid)) {
    const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => null);
    if (status !== null) out.push(Number(/^RssAnon:\s+(\d+)\s+kB/m.exec(status)?.[1]) / 1024);
  }
  return out;
}

async function childrenOf(pid: number): Promise<number[]> {
  const tasks = await readdir(`/proc/${pid}/task`).catch(() => [] as string[]);
  const children: number[] = [];
  for (const task of tasks) {
    const text = await readFile(`/proc/${pid}/task/${task}/children`, 'utf8').catch(() => '');
    for (const c of text.trim().split(/\s+/)) if (c) children.push(Number(c));
  }
  return children;
}
