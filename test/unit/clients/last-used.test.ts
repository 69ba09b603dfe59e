import { afterEach, beforeEach, describe, expect, test, vi } from 'vitest';
import {
  LAST_USED_FLUSH_MS,
  LAST_USED_INTERVAL_MS,
  LastUsedRecorder,
} from '../../../sidecar/clients/store/last-used.js';
import { recordingLogger } from '../support/serve.js';

/** A store that keeps each batch it is asked to write, and fails while `failing` is set. */
function store() {
  const batches: { ids: number[]; at: number }[] = [];
  const state = { failing: false };
  return {
    batches,
    state,
    touchLastUsed: async (ids: readonly number[], at: Date): Promise<number> => {
      if (state.failing) throw new Error('database unavailable');
      batches.push({ ids: [...ids], at: at.getTime() });
      return ids.length;
    },
  };
}

describe('LastUsedRecorder', () => {
  let recorder: LastUsedRecorder | null = null;
  beforeEach(() => {
    vi.useFakeTimers({ now: 1_000_000 });
  });
  afterEach(async () => {
    await recorder?.close();
    recorder = null;
    vi.useRealTimers();
  });

  test('first sights of many clients within a second are written as one batch, after it', async () => {
    const s = store();
    recorder = new LastUsedRecorder(s, recordingLogger().log, Date.now);
    for (const id of [3, 1, 2]) recorder.accepted({ id });
    await vi.advanceTimersByTimeAsync(LAST_USED_FLUSH_MS - 1);
    expect(s.batches).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(s.batches).toEqual([{ ids: [3, 1, 2], at: 1_000_000 + LAST_USED_FLUSH_MS }]);
    // Nothing new: the next tick writes nothing.
    await vi.advanceTimersByTimeAsync(LAST_USED_FLUSH_MS);
    expect(s.batches).toHaveLength(1);
  });

  test('a client is written once a minute however often it is used', async () => {
    const s = store();
    recorder = new LastUsedRecorder(s, recordingLogger().log, Date.now);
    recorder.accepted({ id: 5 });
    await vi.advanceTimersByTimeAsync(LAST_USED_FLUSH_MS);
    for (let i = 0; i < 50; i += 1) {
      recorder.accepted({ id: 5 });
      await vi.advanceTimersByTimeAsync(LAST_USED_FLUSH_MS);
    }
    expect(s.batches.map((b) => b.ids)).toEqual([[5]]);
    await vi.advanceTimersByTimeAsync(LAST_USED_INTERVAL_MS);
    recorder.accepted({ id: 5 });
    await vi.advanceTimersByTimeAsync(LAST_USED_FLUSH_MS);
    expect(s.batches.map((b) => b.ids)).toEqual([[5], [5]]);
  });

  test('a failed write is logged, and the clients are written on their next use', async () => {
    const s = store();
    const { log, lines } = recordingLogger();
    recorder = new LastUsedRecorder(s, log, Date.now);
    s.state.failing = true;
    recorder.accepted({ id: 8 });
    recorder.accepted({ id: 9 });
    await vi.advanceTimersByTimeAsync(LAST_USED_FLUSH_MS);
    expect(lines).toEqual([
      {
        level: 'warn',
        message: 'could not record the last use of API clients',
        fields: { clients: 2, error: 'database unavailable' },
      },
    ]);
    s.state.failing = false;
    recorder.accepted({ id: 9 });
    await vi.advanceTimersByTimeAsync(LAST_USED_FLUSH_MS);
    expect(s.batches.map((b) => b.ids)).toEqual([[9]]);
  });

  test('close and flush write what is waiting at once, without the timer', async () => {
    const s = store();
    recorder = new LastUsedRecorder(s, recordingLogger().log, Date.now);
    recorder.accepted({ id: 1 });
    await recorder.flush();
    expect(s.batches.map((b) => b.ids)).toEqual([[1]]);
    recorder.accepted({ id: 2 });
    await recorder.close();
    recorder = null;
    expect(s.batches.map((b) => b.ids)).toEqual([[1], [2]]);
  });
});
