import { z } from 'zod';
import { type Diagnosis, InvalidRequestError } from '../errors.js';
import { type ApiVersion, formatVersion } from '../versions.js';
import {
  describeVersions,
  type FieldDef,
  type FieldType,
  fieldsAt,
  type RecordDef,
} from './fields.js';
import { recordNamed } from './records.js';

/** `create`: required fields must be present and absent ones get defaults; `update`: all optional. */
export type InputMode = 'create' | 'update';

const cache = new Map<string, z.ZodType>();
const queryCache = new WeakMap<readonly FieldDef[], Map<string, z.ZodType>>();

function valueSchema(type: FieldType, version: ApiVersion): z.ZodType {
  switch (type.kind) {
    case 'string': {
      let s = z.string().max(type.maxLength);
      if (type.minLength !== undefined) s = s.min(type.minLength);
      if (type.pattern) s = s.regex(type.pattern, `must look like: ${type.hint ?? type.pattern}`);
      return s;
    }
    case 'integer':
      return z.int().min(type.min).max(type.max);
    case 'boolean':
      return z.boolean();
    case 'enum':
      return z.enum(type.values as [string, ...string[]]);
    case 'record':
      return recordSchema(recordNamed(type.record), version, 'create');
    case 'any':
      return z.unknown();
    default:
      // Lists and timestamps are only ever returned, never accepted.
      return z.never();
  }
}

function recordSchema(record: RecordDef, version: ApiVersion, mode: InputMode): z.ZodType {
  const key = `${record.type}@${version.major}.${version.minor}:${mode}`;
  const cached = cache.get(key);
  if (cached) return cached;
  const shape: Record<string, z.ZodType> = { type: z.literal(record.type) };
  for (const field of fieldsAt(record.fields, version, 'in')) {
    let s = valueSchema(field.type, version);
    if (field.nullable) s = s.nullable();
    if (mode === 'update' || !field.required) s = s.optional();
    shape[field.name] = s;
  }
  const schema = z.strictObject(shape);
  cache.set(key, schema);
  return schema;
}

// Query strings carry only text: integers and booleans are parsed from it, and a repeated
// parameter arrives as an array, which no schema below accepts.
function queryValueSchema(type: FieldType): z.ZodType {
  switch (type.kind) {
    case 'integer':
      return z
        .string()
        .regex(/^-?\d{1,16}$/, 'expected an integer')
        .transform(Number)
        .pipe(z.int().min(type.min).max(type.max));
    case 'boolean':
      return z.enum(['true', 'false'], 'expected true or false').transform((v) => v === 'true');
    default:
      return valueSchema(type, { major: 0, minor: 0, micro: 0 });
  }
}

function querySchema(fields: readonly FieldDef[], version: ApiVersion): z.ZodType {
  const byVersion = queryCache.get(fields) ?? new Map<string, z.ZodType>();
  queryCache.set(fields, byVersion);
  const key = `${version.major}.${version.minor}`;
  const cached = byVersion.get(key);
  if (cached) return cached;
  const shape: Record<string, z.ZodType> = {};
  for (const field of fieldsAt(fields, version, 'in')) {
    shape[field.name] = queryValueSchema(field.type).optional();
  }
  const schema = z.strictObject(shape);
  byVersion.set(key, schema);
  return schema;
}

function unknownFieldMessage(record: RecordDef | undefined, name: string, version: ApiVersion) {
  const field = record?.fields.find((f) => f.name === name);
  if (!field) return 'unknown field';
  if (field.direction === 'out') return 'read-only field: returned in results, not accepted';
  return `not known to API version ${formatVersion(version)} (the field exists ${describeVersions(field)})`;
}

function diagnosesOf(
  error: z.ZodError,
  record: RecordDef | undefined,
  version: ApiVersion,
): Diagnosis[] {
  return error.issues.flatMap((issue): Diagnosis[] => {
    const at = issue.path.map(String).join('.');
    if (issue.code === 'unrecognized_keys') {
      return issue.keys.map((k) => ({
        type: 'Diagnosis',
        field: at ? `${at}.${k}` : k,
        message: at ? 'unknown field' : unknownFieldMessage(record, k, version),
      }));
    }
    return [{ type: 'Diagnosis', field: at || '(body)', message: issue.message }];
  });
}

function applyDefaults(fields: readonly FieldDef[], value: Record<string, unknown>) {
  for (const field of fields) {
    if (
      field.direction !== 'out' &&
      field.default !== undefined &&
      value[field.name] === undefined
    ) {
      value[field.name] = field.default;
    }
  }
  return value;
}

/** Validates a JSON body as `record` at `version`; throws InvalidRequestError listing every problem. */
export function parseRecord(
  record: RecordDef,
  body: unknown,
  version: ApiVersion,
  mode: InputMode,
): Record<string, unknown> {
  if (body === undefined) {
    throw new InvalidRequestError(`This call needs a JSON ${record.type} body.`, [
      { type: 'Diagnosis', field: '(body)', message: `expected a ${record.type} object` },
    ]);
  }
  const parsed = recordSchema(record, version, mode).safeParse(body);
  if (!parsed.success) {
    throw new InvalidRequestError(
      `The ${record.type} is not valid for API version ${formatVersion(version)}.`,
      diagnosesOf(parsed.error, record, version),
    );
  }
  const value = parsed.data as Record<string, unknown>;
  return mode === 'create' ? applyDefaults(record.fields, value) : value;
}

/** Validates query parameters against `fields` known at `version`, with defaults filled in. */
export function parseQuery(
  fields: readonly FieldDef[],
  query: Record<string, unknown>,
  version: ApiVersion,
): Record<string, unknown> {
  const parsed = querySchema(fields, version).safeParse({ ...query });
  if (!parsed.success) {
    const diagnoses = diagnosesOf(
      parsed.error,
      { type: 'query', description: '', fields },
      version,
    );
    throw new InvalidRequestError('The query parameters are not valid.', diagnoses);
  }
  return applyDefaults(fields, parsed.data as Record<string, unknown>);
}
