import { type FieldDef, knows } from '../schema/fields.js';
import type { ApiVersion } from '../versions.js';

/**
 * The concrete versions of this engine that know a field, as minor ranges per supported major:
 * "1.1–1.2, 2.0–2.1", or "none" when no configured version does.
 */
export function knownRanges(field: FieldDef, natives: readonly ApiVersion[]): string {
  const ranges: string[] = [];
  for (const native of [...natives].sort((a, b) => a.major - b.major)) {
    let first: number | undefined;
    let last: number | undefined;
    for (let minor = 0; minor <= native.minor; minor++) {
      if (!knows(field, { major: native.major, minor, micro: 0 })) continue;
      first ??= minor;
      last = minor;
    }
    if (first === undefined || last === undefined) continue;
    const m = native.major;
    ranges.push(first === last ? `${m}.${first}` : `${m}.${first}–${m}.${last}`);
  }
  return ranges.length > 0 ? ranges.join(', ') : 'none';
}
