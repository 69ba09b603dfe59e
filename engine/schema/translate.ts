import type { ApiVersion } from '../versions.js';
import { fieldsAt } from './fields.js';
import { RECORDS } from './records.js';

/**
 * Translates a result to what a session at `version` knows: every object whose `type` names a
 * record keeps only the fields that version returns, recursively, so fields added later never
 * reach an older client.
 */
export function translate(value: unknown, version: ApiVersion): unknown {
  if (Array.isArray(value)) return value.map((item) => translate(item, version));
  if (value === null || typeof value !== 'object') return value;
  const source = value as Record<string, unknown>;
  const record = typeof source.type === 'string' ? RECORDS.get(source.type) : undefined;
  const out: Record<string, unknown> = {};
  if (!record) {
    for (const [k, v] of Object.entries(source)) out[k] = translate(v, version);
    return out;
  }
  out.type = record.type;
  for (const field of fieldsAt(record.fields, version, 'out')) {
    if (field.name in source) out[field.name] = translate(source[field.name], version);
  }
  return out;
}
