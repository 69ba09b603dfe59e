import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from 'vitest';

// The compiled phase: it forks dist/bench/load/relay.js, which exists only after the build.
const PHASE = join(import.meta.dirname, '../../dist/bench/phases/idle-chain.js');

/** Processes whose command line runs the relay script (none may outlive the phase). */
function relayProcesses(dir: string): number[] {
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(dir);
      } catch {
        return false;
      }
    })
    .map(Number);
}

test('the idle chain times round trips through 4 and 2 relays and leaves no relay behind', async () => {
  expect(existsSync(PHASE), 'run `npm run build` first').toBe(true);
  const { measureIdleChain } = (await import(
    PHASE
  )) as typeof import('../../bench/phases/idle-chain.js');
  const dir = await mkdtemp(join(tmpdir(), 'gw-chain-'));
  try {
    const result = await measureIdleChain(dir, 50);
    expect(result.roundTrips).toBe(50);
    expect(result.firstSight.relays).toBe(4);
    expect(result.seen.relays).toBe(2);
    for (const chain of [result.firstSight, result.seen]) {
      expect(chain.p50).toBeGreaterThan(0);
      expect(chain.p99).toBeGreaterThanOrEqual(chain.p50);
      expect(chain.max).toBeGreaterThanOrEqual(chain.p99);
    }
    // SIGKILLed at the end of each chain: give the kernel a moment to reap them.
    for (let i = 0; i < 50 && relayProcesses(dir).length > 0; i += 1) {
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(relayProcesses(dir)).toEqual([]);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
