import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import {
  checkConfigDir,
  loadSettings,
  nativeDefaults,
  nativeOverrides,
  readNativeHome,
} from '../generator/index.js';
import { locateNginx } from './nginx.js';
import { isAlive } from './process-alive.js';

/**
 * `npm run reload`: applies edits of a running native gateway's configuration directory
 * (default.conf, ssl.conf, the certificate) without a restart. The directory is checked first,
 * as `gateway-config check` does (the native run's sockets, the certificate, `nginx -t`): a
 * configuration nginx would refuse, or one that would refuse every caller, is not sent, and the
 * running nginx keeps serving the old one. Then nginx's master gets SIGHUP (nginx's own reload:
 * new workers, old ones finish their requests).
 */
async function main(): Promise<number> {
  const root = resolve(process.env.GATEWAY_HOME || '.gateway');
  const configDir = join(root, 'config');
  const native = await readNativeHome(configDir);
  if (!native) {
    process.stderr.write(
      `reload: ${root} has never been started by npm start (no native-home.json)\n`,
    );
    return 1;
  }
  const pid = Number(
    (await readFile(join(root, 'run', 'nginx.pid'), 'utf8').catch(() => '')).trim(),
  );
  if (!Number.isInteger(pid) || pid <= 0 || !isAlive(pid)) {
    process.stderr.write(
      `reload: the native gateway in ${root} is not running; start it with npm start\n`,
    );
    return 1;
  }
  const settings = await loadSettings({
    env: process.env,
    defaults: nativeDefaults(native),
    overrides: nativeOverrides(native),
  });
  const report = await checkConfigDir(configDir, settings, {
    native,
    nginx: locateNginx(process.env),
  });
  if (report.problems.length > 0) {
    process.stderr.write(
      `reload: nothing reloaded; ${configDir} has ${report.problems.length} problem(s):\n`,
    );
    for (const problem of report.problems)
      process.stderr.write(`  - ${problem.replaceAll('\n', '\n    ')}\n`);
    return 1;
  }
  process.kill(pid, 'SIGHUP');
  process.stdout.write(
    `nginx (pid ${pid}) reloads ${configDir}: new connections get the edited configuration\n`,
  );
  return 0;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`reload: ${(err as Error).message}\n`);
    process.exit(1);
  },
);
