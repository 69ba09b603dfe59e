import { type ChildProcess, spawn } from 'node:child_process';
import { createWriteStream, type WriteStream } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { createInterface } from 'node:readline';

export interface ChildOptions {
  name: string;
  command: string;
  args: string[];
  env: NodeJS.ProcessEnv;
  logFile: string;
  pidFile: string;
  /** How to ask it to stop; default SIGTERM (nginx: SIGQUIT, a graceful shutdown). */
  stopSignal?: NodeJS.Signals;
  /** Lines of stdout shown to the operator (e.g. the bootstrap key); all lines go to the log. */
  showLine?: (line: string) => boolean;
  /** Called once if the process ends without being asked to. */
  onUnexpectedExit: (name: string, code: number | null, signal: string | null) => void;
}

/** One supervised child: its output in a log file, selected lines on our stdout, a pid file. */
export class Child {
  private readonly process: ChildProcess;
  private readonly log: WriteStream;
  private stopping = false;
  readonly exited: Promise<void>;

  constructor(private readonly options: ChildOptions) {
    this.log = createWriteStream(options.logFile, { flags: 'a' });
    this.process = spawn(options.command, options.args, {
      env: options.env,
      stdio: ['ignore', 'pipe', 'pipe'],
      // Its own process group: Ctrl-C (or a signal to the runner's group) reaches the runner
      // only, which stops the children in order, front to back.
      detached: true,
    });
    const stdout = createInterface({ input: this.process.stdout! });
    stdout.on('line', (line) => {
      this.log.write(`${line}\n`);
      if (options.showLine?.(line)) process.stdout.write(`${line}\n`);
    });
    this.process.stderr!.pipe(this.log, { end: false });
    this.exited = new Promise((resolve) => {
      this.process.on('exit', (code, signal) => {
        if (!this.stopping) options.onUnexpectedExit(options.name, code, signal);
        resolve();
      });
      // A command that cannot be spawned at all ends here, not in 'exit'.
      this.process.on('error', (err) => {
        this.log.write(`${options.name}: ${err.message}\n`);
        if (!this.stopping) options.onUnexpectedExit(options.name, null, null);
        resolve();
      });
    });
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

  /** Last resort when the runner itself is exiting: no waiting, no log. */
  killNow(): void {
    this.stopping = true;
    if (this.running) this.process.kill('SIGKILL');
  }

  /** From now on an exit is expected (the gateway is stopping), not reported. */
  expectExit(): void {
    this.stopping = true;
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
    await new Promise<void>((resolve) => this.log.end(resolve));
  }
}
