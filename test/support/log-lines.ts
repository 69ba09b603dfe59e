/** The last `count` lines of a log, each cut to 300 characters: enough to explain a failure. */
export function lastLines(text: string, count = 12): string {
  return text
    .trim()
    .split('\n')
    .slice(-count)
    .map((line) => line.slice(0, 300))
    .join('\n');
}
