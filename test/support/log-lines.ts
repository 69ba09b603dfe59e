import { readFile } from 'node:fs/promises';
import { join } from 'node:path';

/** The last `count` lines of a log, each cut to 300 characters: enough to explain a failure. */
export function lastLines(text: string, count = 12): string {
  return text
    .trim()
    .split('\n')
    .slice(-count)
    .map((line) => line.slice(0, 300))
    .join('\n');
}

/**
 * The first line of `home`'s log `name` that `predicate` holds for, waited for up to 10 s (the
 * processes write their logs as they go); fails with the log's end.
 */
export async function waitForLogLine(
  home: string,
  name: string,
  predicate: (line: string) => boolean,
): Promise<string> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const text = await readFile(join(home, 'logs', name), 'utf8').catch(() => '');
    const line = text.split('\n').find(predicate);
    if (line) return line;
    if (Date.now() > deadline) throw new Error(`no such line in ${name}:\n${text.slice(-2000)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
