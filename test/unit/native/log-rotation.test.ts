import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import {
  logLimitBytes,
  rotateIfLarge,
  rotateLogs,
  startLogRotation,
} from '../../../native/log-rotation.js';
import { appendToLog } from '../../../native/logs.js';

const mode = async (path: string) => (await stat(path)).mode & 0o777;

let scratch: string;
beforeEach(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'gw-rotate-'));
});
afterEach(async () => {
  await rm(scratch, { recursive: true, force: true });
});

describe('native log rotation', () => {
  test('a log at or under the limit is left as it is', async () => {
    const log = join(scratch, 'sidecar.log');
    await writeFile(log, 'x'.repeat(100), { mode: 0o600 });
    expect(await rotateIfLarge(log, 100)).toBe(false);
    expect(await readdir(scratch)).toEqual(['sidecar.log']);
    expect((await stat(log)).size).toBe(100);
  });

  test('past the limit it is copied to .1 and emptied in place; a writer that had it open goes on at its start', async () => {
    const log = join(scratch, 'nginx-access.log');
    const writer = appendToLog(log);
    await new Promise<void>((resolve) => writer.write(`${'a'.repeat(200)}\n`, () => resolve()));
    expect(await rotateIfLarge(log, 100)).toBe(true);
    await new Promise<void>((resolve) => writer.end('after\n', () => resolve()));
    expect(await readFile(`${log}.1`, 'utf8')).toBe(`${'a'.repeat(200)}\n`);
    // Appended, not written at the old offset: no hole of NUL bytes before it.
    expect(await readFile(log, 'utf8')).toBe('after\n');
    expect(await mode(log)).toBe(0o600);
    expect(await mode(`${log}.1`)).toBe(0o600);
  });

  test('two generations are kept: .1 the newest, .2 the one before, older ones dropped', async () => {
    const log = join(scratch, 'app.log');
    for (const text of ['first\n', 'second\n', 'third\n']) {
      await writeFile(log, text.padEnd(50, '.'), { mode: 0o600 });
      expect(await rotateIfLarge(log, 10)).toBe(true);
    }
    expect((await readdir(scratch)).sort()).toEqual(['app.log', 'app.log.1', 'app.log.2']);
    expect(await readFile(`${log}.1`, 'utf8')).toMatch(/^third/);
    expect(await readFile(`${log}.2`, 'utf8')).toMatch(/^second/);
  });

  test('every *.log of the folder is looked at, never a rotated generation', async () => {
    await writeFile(join(scratch, 'big.log'), 'x'.repeat(64));
    await writeFile(join(scratch, 'small.log'), 'x');
    await writeFile(join(scratch, 'old.log.1'), 'x'.repeat(64));
    expect(await rotateLogs(scratch, 32)).toEqual(['big.log']);
    expect((await readdir(scratch)).sort()).toEqual([
      'big.log',
      'big.log.1',
      'old.log.1',
      'small.log',
    ]);
  });

  test('started, it rotates at once; with a limit of 0 it never does', async () => {
    const log = join(scratch, 'sidecar.log');
    await writeFile(log, 'x'.repeat(64));
    const off = startLogRotation(scratch, 0, () => undefined);
    off();
    expect(await readdir(scratch)).toEqual(['sidecar.log']);
    const warnings: string[] = [];
    const stop = startLogRotation(scratch, 32, (line) => warnings.push(line));
    try {
      await expect
        .poll(() => readdir(scratch).then((f) => f.sort()))
        .toEqual(['sidecar.log', 'sidecar.log.1']);
    } finally {
      stop();
    }
    expect(warnings).toEqual([]);
  });

  test('GATEWAY_LOG_MAX_MB: megabytes, 64 when unset, 0 for never; anything else is an error', () => {
    expect(logLimitBytes(undefined)).toBe(64 * 1024 * 1024);
    expect(logLimitBytes('')).toBe(64 * 1024 * 1024);
    expect(logLimitBytes('0')).toBe(0);
    expect(logLimitBytes('0.5')).toBe(512 * 1024);
    expect(logLimitBytes('100')).toBe(100 * 1024 * 1024);
    for (const bad of ['-1', '64MB', 'lots', '1e3', 'Infinity']) {
      expect(() => logLimitBytes(bad), bad).toThrow(/GATEWAY_LOG_MAX_MB must be a number/);
    }
  });
});
