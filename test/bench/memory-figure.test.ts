import { describe, expect, test } from 'vitest';
import type { MemorySample } from '../../bench/phases/context.js';
import type { MemoryResult } from '../../bench/phases/memory.js';
import { memoryFigure } from '../../bench/report/figures.js';

const result: MemoryResult = { requests: 1_010_185, wanted: 1_000_000, keys: 1001, load: null };

const sample = (requests: number, sidecarA: number, at: string): MemorySample => ({
  requests,
  sidecarA,
  sidecarB: sidecarA,
  at,
});

// The samples of the bench run of 2026-11-26T20:42 (its results file, bench/results/
// 2026-11-26T20-42-52-526Z.json, is in git history; a fast machine: the engine rows alone made
// 476k of the 1M requests).
const before = [
  sample(0, 84.6, 'started'),
  sample(475_908, 72.0, 'throughput'),
  sample(578_069, 72.4, 'latency'),
  sample(580_070, 113.0, 'first request'),
  sample(580_276, 121.0, 'management'),
  sample(584_351, 124.3, 'revocation'),
  sample(584_351, 130.9, 'list-alls'),
];

describe('the sidecar memory figure', () => {
  test('growth is measured under the memory load, not across the one-off phases before it', () => {
    const samples = [
      ...before,
      sample(721_044, 132.0, 'memory load'),
      sample(864_304, 132.3, 'memory load'),
      sample(1_010_185, 133.3, 'memory load'),
    ];
    const figure = memoryFigure(result, samples);
    expect(figure.measured).toBe(133.3);
    // Half of the load: 584,351 + (1,010,185 - 584,351) / 2 = 797,268; the sample before it.
    expect(figure.note).toContain('+1.3 MB since 721044 requests');
    expect(figure.pass).toBe(true);
  });

  test('memory that grows under the load fails the figure', () => {
    const samples = [
      ...before,
      sample(721_044, 132.0, 'memory load'),
      sample(864_304, 137.0, 'memory load'),
      sample(1_010_185, 145.0, 'memory load'),
    ];
    const figure = memoryFigure(result, samples);
    expect(figure.note).toContain('+13.0 MB since 721044 requests');
    expect(figure.pass).toBe(false);
  });

  test('more than 150 MB fails however flat', () => {
    const samples = [sample(500_000, 151, 'memory load'), sample(1_000_000, 151, 'memory load')];
    expect(memoryFigure(result, samples).pass).toBe(false);
  });
});
