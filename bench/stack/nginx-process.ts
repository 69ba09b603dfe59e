import { spawn } from 'node:child_process';
import { once } from 'node:events';

/** An nginx the bench started itself (a baseline, the static upstream), in the foreground. */
export interface NginxProcess {
  pid: number | undefined;
  running(): boolean;
  /** What nginx wrote to stderr so far (start-up failures land here). */
  stderr(): string;
  /** Graceful (SIGQUIT, as the runner stops its nginx), then SIGKILL after 10 s. */
  stop(): Promise<void>;
}

/** Starts `nginx` with these arguments (`daemon off;` comes from the main nginx.conf). */
export function spawnNginx(nginx: string, args: string[]): NginxProcess {
  const child = spawn(nginx, args, {
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
      child.kill('SIGQUIT');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}
