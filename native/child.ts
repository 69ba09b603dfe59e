import { type ChildProcess, spawn } from 'node:child_process';
import type { WriteStream } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { appendToLog } from './logs.js';

export interface ChildOptions {
  name: string;
  command: string;
  args: string[];
  env: NodeJS.ProcessEnv;
  logFile: string;
  pidFile: string;
  /** How to ask it to stop; default SIGTERM (nginx: SIGQUIT, a graceful shutdown). */
  stopSignal?: NodeJS.Signals;
  /** Run as this user and group (PostgreSQL, which refuses root). */
  uid?: number;
  gid?: number;
  /** Lines of stdout shown to the operator (e.g. the bootstrap key); all lines go to the log. */
  showLine?: (line: string) => boolean;
}

/** How a child ended: its exit status or signal, and whether the runner asked for it. */
export interface ExitInfo {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** true when the runner stopped it; false when it died. */
  expected: boolean;
  /** Why the runner killed it, when it did so because it misbehaved (e.g. never became ready). */
  reason?: string;
}

/** "code 1", "signal SIGKILL", or the reason the runner gave; for the log. */
export function describeExit(exit: ExitInfo): string {
  if (exit.reason) return exit.reason;
  if (exit.signal) return `killed by ${exit.signal}`;
  return exit.code === null ? 'could not be started' : `exit code ${exit.code}`;
}

/** One process of the native run: its output in a log file, selected lines on our stdout. */
export class Child {
  private readonly process: ChildProcess;
  private readonly log: WriteStream;
  private stopping = false;
  private failReason: string | undefined;
  readonly exited: Promise<ExitInfo>;
  /** Resolves once its output is in the log file (after 'close', which follows 'exit'). */
  private readonly flushed: Promise<void>;

  constructor(private readonly options: ChildOptions) {
    this.log = appendToLog(options.logFile);
    this.process = spawn(options.command, options.args, {
      env: options.env,
      stdio: ['ignore', 'pipe', 'pipe'],
      // Its own process group: Ctrl-C (or a signal to the runner's group) reaches the runner
      // only, which stops the children in order, front to back; and when it dies, what it
      // left behind (nginx's workers) can be ended as one group.
      detached: true,
      ...(options.uid === undefined ? {} : { uid: options.uid }),
      ...(options.gid === undefined ? {} : { gid: options.gid }),
    });
    const stdout = createInterface({ input: this.process.stdout! });
    stdout.on('line', (line) => {
      this.log.write(`${line}\n`);
      if (options.showLine?.(line)) process.stdout.write(`${line}\n`);
    });
    this.process.stderr!.pipe(this.log, { end: false });
    this.flushed = new Promise((resolve) => {
      let ended = false;
      const end = () => {
        if (ended) return;
        ended = true;
        this.log.end(() => resolve());
      };
      this.process.on('close', end);
      this.process.on('error', end);
    });
    this.exited = new Promise((resolve) => {
      const done = (code: number | null, signal: NodeJS.Signals | null) => {
        this.killGroup();
        resolve({
          code,
          signal,
          expected: this.stopping,
          ...(this.failReason ? { reason: this.failReason } : {}),
        });
      };
      this.process.on('exit', done);
      // A command that cannot be spawned at all ends here, not in 'exit'.
      this.process.on('error', (err) => {
        this.log.write(`${options.name}: ${err.message}\n`);
        done(null, null);
      });
    });
  }

  get name(): string {
    return this.options.name;
  }

  get pid(): number | undefined {
    return this.process.pid;
  }

  get running(): boolean {
    return this.process.exitCode === null && this.process.signalCode === null;
  }

  async writePidFile(): Promise<void> {
    if (this.process.pid !== undefined)
      await writeFile(this.options.pidFile, `${this.process.pid}\n`);
  }

  /** Kills it because it misbehaves; its exit is reported as a death with this reason. */
  fail(reason: string): void {
    this.failReason = reason;
    if (this.running) this.process.kill('SIGKILL');
  }

  /** Last resort when the runner itself is exiting: no waiting, no log. */
  killNow(): void {
    this.stopping = true;
    if (this.running) this.process.kill('SIGKILL');
    this.killGroup();
  }

  /** Asks the process to stop, and kills it if it has not stopped after `graceMs`. */
  async stop(graceMs = 10_000): Promise<void> {
    this.stopping = true;
    if (this.running) {
      this.process.kill(this.options.stopSignal ?? 'SIGTERM');
      const timer = setTimeout(() => this.process.kill('SIGKILL'), graceMs);
      await this.exited;
      clearTimeout(timer);
    }
    await this.flushed;
  }

  /** Ends what the process left in its group: nginx workers outlive a killed master, and would keep the port. */
  private killGroup(): void {
    if (this.process.pid === undefined) return;
    try {
      process.kill(-this.process.pid, 'SIGKILL');
    } catch {
      // the group is empty already
    }
  }
}
