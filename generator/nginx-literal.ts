/**
 * The only way values become nginx text. Settings were allow-listed when parsed; these checks
 * repeat the essentials so that a value which slipped past validation fails loudly here
 * instead of changing the meaning of the rendered file.
 */

// Would end, escape or interpolate inside a double-quoted nginx string, or break the line.
const UNSAFE_IN_QUOTES = /["\\$\r\n]/;

/** A double-quoted nginx string holding `value` literally. */
export function quoted(value: string): string {
  if (UNSAFE_IN_QUOTES.test(value)) {
    throw new Error(`refusing to render ${JSON.stringify(value)} into an nginx string`);
  }
  return `"${value}"`;
}

/** A double-quoted nginx string: literal text followed by one nginx variable. */
export function quotedThenVariable(literal: string, variable: string): string {
  if (!/^\$[a-z_]+$/.test(variable)) throw new Error(`not an nginx variable: ${variable}`);
  return `${quoted(literal).slice(0, -1)}${variable}"`;
}

/** A single-quoted nginx string holding a JSON document (for `return` and `map` bodies). */
export function jsonLiteral(document: unknown): string {
  const json = JSON.stringify(document);
  if (/['\\$\r\n]/.test(json)) throw new Error(`JSON unsafe for an nginx string: ${json}`);
  return `'${json}'`;
}

/** An unquoted nginx `true`/`false`: the form operators type when they edit the file. */
export function flag(value: boolean): string {
  return value ? 'true' : 'false';
}
