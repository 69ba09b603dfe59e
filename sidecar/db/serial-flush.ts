/**
 * A periodic write, never two at once: every `intervalMs` (a timer that keeps no process
 * alive), and on demand. Each call to `run` waits for the one before it, so counts collected
 * for one flush are written before the next collects more. `write` must not throw.
 */
export class SerialFlush {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> = Promise.resolve();

  constructor(
    private readonly write: () => Promise<void>,
    private readonly intervalMs: number,
  ) {}

  start(): void {
    this.timer = setInterval(() => void this.run(), this.intervalMs);
    this.timer.unref();
  }

  /** One more write after those already queued; resolves when it is done. */
  run(): Promise<void> {
    this.running = this.running.then(() => this.write());
    return this.running;
  }

  /** Stops the timer and writes what is left. */
  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.run();
  }
}
