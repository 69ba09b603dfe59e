import { type ApiVersion, compareFeatures } from '../versions.js';

/** What a field holds; validation, translation and the /api reference are all derived from it. */
export type FieldType =
  | { kind: 'string'; minLength?: number; maxLength: number; pattern?: RegExp; hint?: string }
  | { kind: 'integer'; min: number; max: number }
  | { kind: 'boolean' }
  | { kind: 'enum'; values: readonly string[] }
  | { kind: 'record'; record: string }
  | { kind: 'list'; of: string }
  | { kind: 'timestamp' }
  | { kind: 'any' };

/** One field of a record or of a query string, and the versions that know it. */
export interface FieldDef {
  name: string;
  type: FieldType;
  description: string;
  /** Accepted in requests, returned in results, or both. */
  direction: 'in' | 'out' | 'both';
  /** First version (major.minor) that knows the field; absent: every version. */
  since?: { major: number; minor: number };
  /** First major version that no longer knows the field. */
  removedIn?: number;
  /** Must be present when an object is created. */
  required?: boolean;
  nullable?: boolean;
  /** Filled in on create when the field is absent, whether or not the session's version knows it. */
  default?: string | number | boolean | null;
}

/** A JSON record with a literal `type` field, such as `APISession` or `User`. */
export interface RecordDef {
  type: string;
  description: string;
  fields: readonly FieldDef[];
}

/** Whether a session at `version` knows `field`. */
export function knows(field: FieldDef, version: ApiVersion): boolean {
  if (field.since && compareFeatures(version, { ...field.since, micro: 0 }) < 0) return false;
  return field.removedIn === undefined || version.major < field.removedIn;
}

/** The fields a session at `version` may send (`in`) or receive (`out`). */
export function fieldsAt(
  fields: readonly FieldDef[],
  version: ApiVersion,
  direction: 'in' | 'out',
): FieldDef[] {
  return fields.filter(
    (f) => (f.direction === direction || f.direction === 'both') && knows(f, version),
  );
}

/** "1.1", "until major 2", "1.1, until major 2" or "all"; for messages and the reference. */
export function describeVersions(field: FieldDef): string {
  const parts: string[] = [];
  if (field.since) parts.push(`since ${field.since.major}.${field.since.minor}`);
  if (field.removedIn !== undefined) parts.push(`before major ${field.removedIn}`);
  return parts.length > 0 ? parts.join(', ') : 'all versions';
}
