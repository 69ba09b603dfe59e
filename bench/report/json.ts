/**
 * JSON as the repository's formatter (biome, line width 100) writes it, so a results file can
 * be committed as the bench wrote it and `biome ci` stays clean: objects one key per line,
 * arrays of plain values on one line when they fit, anything else one item per line.
 */
export function formatJson(value: unknown): string {
  return `${format(value, '', 0)}\n`;
}

const WIDTH = 100;

function isPlain(value: unknown): boolean {
  return value === null || typeof value !== 'object';
}

/** `used`: characters already on the line before this value (indent, key, colon). */
function format(value: unknown, indent: string, used: number): string {
  if (isPlain(value)) return JSON.stringify(value) ?? 'null';
  const inner = `${indent}  `;
  if (Array.isArray(value)) {
    if (value.length === 0) return '[]';
    if (value.every(isPlain)) {
      const line = `[${value.map((v) => JSON.stringify(v) ?? 'null').join(', ')}]`;
      // +1: the comma that may follow on the same line.
      if (used + line.length + 1 <= WIDTH) return line;
    }
    const items = value.map((v) => `${inner}${format(v, inner, inner.length)}`);
    return `[\n${items.join(',\n')}\n${indent}]`;
  }
  const entries = Object.entries(value as Record<string, unknown>).filter(
    ([, v]) => v !== undefined && typeof v !== 'function',
  );
  if (entries.length === 0) return '{}';
  const lines = entries.map(([k, v]) => {
    const head = `${inner}${JSON.stringify(k)}: `;
    return `${head}${format(v, inner, head.length)}`;
  });
  return `{\n${lines.join(',\n')}\n${indent}}`;
}
