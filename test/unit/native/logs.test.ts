import { mkdir, mkdtemp, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { appendToLog, createLogFile, prepareLogDir } from '../../../native/logs.js';

const mode = async (path: string) => (await stat(path)).mode & 0o777;

// Under the usual umask (022) a file or folder made without a mode is readable by all, so
// these modes come from creation. The umask is not set here: Stryker runs test/unit in
// worker threads, where setting it throws.
let scratch: string;
beforeEach(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'gw-logs-'));
});
afterEach(async () => {
  await rm(scratch, { recursive: true, force: true });
});

describe('native log files', () => {
  test('a new log folder and its files are owner-only from creation', async () => {
    const logs = join(scratch, 'logs');
    await prepareLogDir(logs);
    expect(await mode(logs)).toBe(0o700);
    const stream = appendToLog(join(logs, 'sidecar.log'));
    await new Promise<void>((resolve) => stream.end('NEWLY GENERATED API KEY: x\n', resolve));
    expect(await mode(join(logs, 'sidecar.log'))).toBe(0o600);
    await createLogFile(join(logs, 'nginx-error.log'));
    expect(await mode(join(logs, 'nginx-error.log'))).toBe(0o600);
  });

  test('an existing folder and its files are tightened; links are left alone', async () => {
    const logs = join(scratch, 'logs');
    await mkdir(logs, { mode: 0o755 });
    await writeFile(join(logs, 'sidecar.log'), 'NEWLY GENERATED API KEY: x\n', { mode: 0o644 });
    await writeFile(join(logs, 'nginx-access.log'), '', { mode: 0o666 });
    const elsewhere = join(scratch, 'elsewhere');
    await writeFile(elsewhere, '', { mode: 0o644 });
    await symlink(elsewhere, join(logs, 'linked.log'));
    await prepareLogDir(logs);
    expect(await mode(logs)).toBe(0o700);
    expect(await mode(join(logs, 'sidecar.log'))).toBe(0o600);
    expect(await mode(join(logs, 'nginx-access.log'))).toBe(0o600);
    expect(await mode(elsewhere)).toBe(0o644);
  });

  test('an existing file keeps its content when opened again', async () => {
    const logs = join(scratch, 'logs');
    await prepareLogDir(logs);
    const file = join(logs, 'nginx-error.log');
    await writeFile(file, 'earlier\n', { mode: 0o600 });
    await createLogFile(file);
    const stream = appendToLog(file);
    await new Promise<void>((resolve) => stream.end('later\n', resolve));
    expect(await readFile(file, 'utf8')).toBe('earlier\nlater\n');
  });
});
