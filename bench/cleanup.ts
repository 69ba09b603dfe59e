/**
 * Everything the run started, stopped in reverse order however the run ends (finished,
 * failed, Ctrl-C, or the time budget's watchdog). Each step is given a bounded time so one
 * stuck process cannot keep the others alive.
 */
export class Cleanup {
  private readonly steps: { name: string; run: () => Promise<void> }[] = [];
  private running: Promise<void> | null = null;

  add(name: string, run: () => Promise<void>): void {
    this.steps.push({ name, run });
  }

  /** Runs every step once (later calls wait for the same run). */
  runAll(log: (line: string) => void): Promise<void> {
    this.running ??= (async () => {
      for (const step of this.steps.reverse()) {
        try {
          await withTimeout(step.run(), 30_000, step.name);
        } catch (err) {
          log(`cleanup: ${step.name}: ${(err as Error).message}`);
        }
      }
    })();
    return this.running;
  }
}

export async function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
