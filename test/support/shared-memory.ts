import { open, readFile } from 'node:fs/promises';

/** Shared memory zones of a process (nginx's lua_shared_dicts among them): MAP_SHARED anonymous. */
export async function sharedMemory(pid: number): Promise<Buffer> {
  const maps = await readFile(`/proc/${pid}/maps`, 'utf8');
  const parts: Buffer[] = [];
  const mem = await open(`/proc/${pid}/mem`, 'r');
  try {
    for (const line of maps.split('\n')) {
      if (!line.includes('/dev/zero (deleted)')) continue;
      const [range] = line.split(' ');
      const [from, to] = (range ?? '').split('-').map((h) => BigInt(`0x${h}`));
      const length = Number((to ?? 0n) - (from ?? 0n));
      const buffer = Buffer.alloc(length);
      await mem.read(buffer, 0, length, Number(from));
      parts.push(buffer);
    }
  } finally {
    await mem.close();
  }
  return Buffer.concat(parts);
}
