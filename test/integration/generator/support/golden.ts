import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { expect } from 'vitest';

/** `UPDATE_GOLDEN=1 npx vitest run test/integration/generator` rewrites the golden files instead of comparing. */
export const UPDATING = process.env.UPDATE_GOLDEN === '1';

/**
 * Compares `actual` with the golden file at `path`; vitest prints a line diff on mismatch.
 * In update mode, writes `actual` there instead.
 */
export async function expectGolden(actual: string, path: string): Promise<void> {
  if (UPDATING) {
    await mkdir(dirname(path), { recursive: true });
    await writeFile(path, actual);
    return;
  }
  const expected = await readFile(path, 'utf8').catch(() => {
    throw new Error(`golden file ${path} is missing; create it with UPDATE_GOLDEN=1`);
  });
  expect(
    actual,
    `${path} differs; if intended, run UPDATE_GOLDEN=1 npx vitest run test/integration/generator`,
  ).toBe(expected);
}
