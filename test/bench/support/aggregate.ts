import type { Aggregate } from '../../../bench/phases/aggregate.js';

/** A measured target's aggregate with only its rate and errors chosen (16 s of requests). */
export const aggregate = (rps: number, errors = 0): Aggregate => ({
  target: 't',
  rps,
  p50: 1,
  p99: 5,
  requests: rps * 16,
  errors,
  cpu: null,
  runs: [],
});
