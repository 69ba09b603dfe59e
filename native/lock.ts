import { open, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { GatewayHome } from './home.js';
import { isAlive } from './process-alive.js';

/** One native gateway per home: a second one would fight over the ports, sockets and data. */
export async function acquireLock(home: GatewayHome): Promise<() => Promise<void>> {
  const path = join(home.run, 'gateway.lock');
  for (let attempt = 0; attempt < 2; attempt += 1) {
    try {
      const file = await open(path, 'wx');
      await file.write(`${process.pid}\n`);
      await file.close();
      return () => rm(path, { force: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const pid = Number((await readFile(path, 'utf8').catch(() => '')).trim());
      if (Number.isInteger(pid) && pid > 0 && isAlive(pid)) {
        throw new Error(`another gateway (pid ${pid}) is running with GATEWAY_HOME=${home.root}`);
      }
      await rm(path, { force: true }); // left by a run that was killed
    }
  }
  throw new Error(`could not lock ${path}`);
}
