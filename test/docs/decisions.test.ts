import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, test } from 'vitest';

// The decision records keep a fixed header (title, status, date) and docs/decisions/README.md
// indexes every one of them with the same status, so that a reader sees at once which records
// still hold and which later record replaced one. Not under test/unit: see links.test.ts.

const DIR = resolve(import.meta.dirname, '../../docs/decisions');
const RECORDS = readdirSync(DIR)
  .filter((f) => /^\d{8}-.+\.md$/.test(f))
  .sort();
const INDEX = readFileSync(join(DIR, 'README.md'), 'utf8');

/** The header of a record: `# Title`, a blank line, `Status: …`, `Date: YYYY-MM-DD`. */
function headerOf(text: string): { title: string; status: string; date: string } | null {
  const m = /^# (.+)\n\nStatus: (.+?) *\nDate: (\d{4}-\d{2}-\d{2})\n/.exec(text);
  return m ? { title: m[1]!, status: m[2]!, date: m[3]! } : null;
}

describe('the decision records', () => {
  test.each(RECORDS)('%s starts with its title, status and date', (file) => {
    const header = headerOf(readFileSync(join(DIR, file), 'utf8'));
    expect(header, 'first lines: "# Title", "", "Status: …", "Date: YYYY-MM-DD"').not.toBeNull();
    expect(header!.date.replaceAll('-', '')).toBe(file.slice(0, 8));
  });

  test.each(RECORDS)('the index lists %s with its status', (file) => {
    const header = headerOf(readFileSync(join(DIR, file), 'utf8'));
    // | date | [title](file) | status |: the record's own row, not one whose status links it.
    const rows = INDEX.split('\n').map((line) => line.split(/(?<!\\)\|/).map((c) => c.trim()));
    const row = rows.find((cells) => cells[2]?.endsWith(`](${file})`));
    expect(row, `a row linking ${file}`).toBeDefined();
    expect(row![3]).toBe(header?.status);
  });
});
