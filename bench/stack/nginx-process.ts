import { spawn } from 'node:child_process';
import { once } from 'node:events';

/** A server the bench started itself (a baseline nginx, the static upstream, HAProxy), in the foreground. */
export interface ServerProcess {
  pid: number | undefined;
  running(): boolean;
  /** What it wrote to stderr so far (start-up failures land here). */
  stderr(): string;
  /** Graceful (its soft-stop signal), then SIGKILL after 10 s. */
  stop(): Promise<void>;
}

/** Starts `nginx` with these arguments (`daemon off;` comes from the main nginx.conf). */
export function spawnNginx(nginx: string, args: string[]): ServerProcess {
  // SIGQUIT: a graceful stop, as the runner stops its nginx.
  return spawnServer(nginx, args, 'SIGQUIT');
}

/** Starts `command` in the foreground of its own session; `softStop` asks it to finish. */
export function spawnServer(
  command: string,
  args: string[],
  softStop: NodeJS.Signals,
): ServerProcess {
  const child = spawn(command, args, {
    stdio: ['ignore', 'ignore', 'pipe'],
    // Its own session, as the native runner starts the gateway's nginx (native/child.ts): with
    // the kernel's autogroup scheduling (on by default) each session is scheduled as one group,
    // so a baseline left in the bench's session shared wrk's group while the gateway it is
    // compared with had its own, and at maximum rate only the gateway waited for the group's
    // turn: p99 4 against 16-37 ms on the same configuration (docs/decisions/
    // 20261126-bench-autogroups.md). The bench stops these itself (Cleanup), signals or not.
    detached: true,
  });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => {
    stderr += d.toString('utf8');
  });
  const exited = once(child, 'exit');
  const running = () => child.exitCode === null && child.signalCode === null;
  return {
    pid: child.pid,
    running,
    stderr: () => stderr,
    async stop() {
      if (!running()) return;
      child.kill(softStop);
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}
