import { type Child, describeExit } from './child.js';

/** One role of the native run, as the supervisor starts it again and again. */
export interface ServiceSpec {
  name: string;
  /** Spawns one process of the service. */
  spawn(): Child;
  /** Resolves once that process serves; rejects when it does not within its time. */
  ready(child: Child): Promise<void>;
}

export interface SupervisorOptions {
  say: (line: string) => void;
  /** Where each service's log is, for the operator: `logs/<name>.log`. */
  logOf: (name: string) => string;
  /** A service that dies this often within `windowMs` ends the run (default 5 in 60 s). */
  maxDeaths?: number;
  windowMs?: number;
  /** Restart delays double from the first to the last, per recent death. */
  firstDelayMs?: number;
  maxDelayMs?: number;
  /**
   * Whether a service is held down on purpose (runit's `down` file): a process that ends while
   * held is not restarted, nor counted, until the hold is lifted.
   */
  heldDown?: (name: string) => boolean;
}

/**
 * Keeps the native run's children alive: a child that dies is restarted after a delay that
 * grows with its recent deaths, each death logged with its cause and counted; one that dies
 * `maxDeaths` times within `windowMs` (or never comes up) ends the run: `failed` resolves with
 * the reason, and the runner stops everything and exits non-zero. While a child is down its
 * callers get nginx's 503 (fail closed). See docs/decisions/20261123-native-supervision.md.
 */
export class Supervisor {
  private readonly children = new Map<string, Child>();
  private readonly order: string[] = [];
  private stopping = false;
  private readonly wakeAll = new Set<() => void>();
  private reportFailure: (reason: string) => void = () => {};
  /** Resolves with the reason when a service keeps dying; never rejects. */
  readonly failed: Promise<string>;
  private readonly maxDeaths: number;
  private readonly windowMs: number;
  private readonly firstDelayMs: number;
  private readonly maxDelayMs: number;

  constructor(private readonly options: SupervisorOptions) {
    this.maxDeaths = options.maxDeaths ?? 5;
    this.windowMs = options.windowMs ?? 60_000;
    this.firstDelayMs = options.firstDelayMs ?? 250;
    this.maxDelayMs = options.maxDelayMs ?? 8_000;
    this.failed = new Promise((resolve) => {
      this.reportFailure = resolve;
    });
  }

  /** Starts a service and keeps it running; resolves once it first serves, rejects on giving up. */
  start(spec: ServiceSpec): Promise<void> {
    this.order.push(spec.name);
    return new Promise((resolve, reject) => {
      void this.keep(spec, resolve, reject);
    });
  }

  /** The processes running now, by service. */
  current(): Child[] {
    return [...this.children.values()];
  }

  /** Stops every service, the last started first; no restarts from here on. */
  async stop(): Promise<void> {
    this.stopping = true;
    for (const wake of this.wakeAll) wake();
    for (const name of [...this.order].reverse()) await this.children.get(name)?.stop();
  }

  /** Kills every child at once, for a runner that is exiting anyway. */
  killNow(): void {
    this.stopping = true;
    for (const child of this.children.values()) child.killNow();
  }

  private async keep(
    spec: ServiceSpec,
    up: () => void,
    giveUp: (err: Error) => void,
  ): Promise<void> {
    const deaths: number[] = [];
    let everUp = false;
    while (!this.stopping) {
      const child = spec.spawn();
      this.children.set(spec.name, child);
      const serving = await Promise.race([
        spec.ready(child).then(
          () => child.running,
          (err: unknown) => {
            child.fail(`did not come up: ${(err as Error).message}`);
            return false;
          },
        ),
        child.exited.then(() => false),
      ]);
      if (serving) {
        await child.writePidFile();
        if (everUp) this.options.say(`${spec.name} is back (pid ${child.pid})`);
        everUp = true;
        up();
      }
      const exit = await child.exited;
      if (exit.expected || this.stopping) return;
      if (this.options.heldDown?.(spec.name)) {
        this.options.say(
          `${spec.name} stopped (${describeExit(exit)}) and is held down: not restarted until the hold is lifted`,
        );
        while (!this.stopping && this.options.heldDown(spec.name))
          await this.sleep(this.firstDelayMs);
        if (!this.stopping) this.options.say(`${spec.name}: hold lifted, starting it`);
        continue;
      }

      const now = Date.now();
      deaths.push(now);
      while (deaths.length > 0 && deaths[0]! <= now - this.windowMs) deaths.shift();
      const cause = describeExit(exit);
      const what = serving ? 'died' : 'failed to start';
      if (deaths.length >= this.maxDeaths) {
        const reason =
          `${spec.name} ${what} ${deaths.length} times within ${this.windowMs / 1000} s ` +
          `(last: ${cause}); giving up. See ${this.options.logOf(spec.name)}`;
        this.options.say(reason);
        this.reportFailure(reason);
        giveUp(new Error(reason));
        return;
      }
      const delay = Math.min(this.firstDelayMs * 2 ** (deaths.length - 1), this.maxDelayMs);
      this.options.say(
        `${spec.name} ${what} (${cause}); restarting in ${delay} ms ` +
          `(${deaths.length} of ${this.maxDeaths} deaths allowed within ${this.windowMs / 1000} s). ` +
          `See ${this.options.logOf(spec.name)}`,
      );
      await this.sleep(delay);
    }
  }

  /** Waits, unless the run is stopping. */
  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.wakeAll.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.wakeAll.add(done);
    });
  }
}
