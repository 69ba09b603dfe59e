import { performance } from 'node:perf_hooks';

/** The run's clock: seconds since start, and what is left before the memory phase must end. */
export class Budget {
  private readonly started = performance.now();

  /** `total`: seconds by which everything must be stopped; `teardown`: kept for stopping. */
  constructor(
    readonly total: number,
    private readonly teardown = 10,
  ) {}

  elapsed(): number {
    return (performance.now() - this.started) / 1000;
  }

  /** Seconds a phase may still use, leaving time to stop everything. */
  left(): number {
    return this.total - this.teardown - this.elapsed();
  }
}
