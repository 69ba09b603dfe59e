import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, expect, test } from 'vitest';

// `npm run build` marks package.json's bins executable itself: npx's cached link to a
// checkout's gateway-config outlives a fresh clone at the same path, and tsc writes new files
// 0644, so without this the second `npx gateway-config` on a rebuilt checkout is "Permission
// denied" (CI's second run at the same path was).
const SCRIPT = join(import.meta.dirname, '..', '..', '..', 'scripts', 'mark-bins-executable.mjs');
let scratch: string | undefined;

afterAll(async () => {
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

test('every bin package.json names is made executable, its other bits kept', async () => {
  scratch = await mkdtemp(join(tmpdir(), 'gw-bins-'));
  await mkdir(join(scratch, 'dist'));
  await writeFile(
    join(scratch, 'package.json'),
    JSON.stringify({ bin: { one: 'dist/one.js', two: 'dist/two.js' } }),
  );
  await writeFile(join(scratch, 'dist/one.js'), '#!/usr/bin/env node\n', { mode: 0o644 });
  await writeFile(join(scratch, 'dist/two.js'), '#!/usr/bin/env node\n', { mode: 0o600 });
  await writeFile(join(scratch, 'dist/other.js'), '', { mode: 0o644 });

  await promisify(execFile)(process.execPath, [SCRIPT, scratch]);

  expect((await stat(join(scratch, 'dist/one.js'))).mode & 0o777).toBe(0o755);
  expect((await stat(join(scratch, 'dist/two.js'))).mode & 0o777).toBe(0o711);
  expect((await stat(join(scratch, 'dist/other.js'))).mode & 0o777).toBe(0o644);
});
