import { readFile } from 'node:fs/promises';
import yaml from 'js-yaml';
import { SettingsError } from './errors.js';
import { describeIssues } from './settings-issues.js';
import { type Settings, settingsSchema } from './settings-schema.js';

export type { Settings } from './settings-schema.js';

/** Settings before validation: plain YAML data, possibly wrong. */
export type RawSettings = Record<string, unknown>;

/**
 * Environment variables that override the settings file, for the container where the operator
 * sets the FQDN in the composition file. Empty values count as unset.
 */
export const SETTINGS_ENV: Readonly<Record<string, readonly string[]>> = {
  GATEWAY_FQDN: ['fqdn'],
  GATEWAY_HTTPS_PORT: ['https_port'],
  GATEWAY_HTTP_REDIRECT_PORT: ['http_redirect_port'],
  GATEWAY_APP_UPSTREAM: ['upstreams', 'app'],
  GATEWAY_SIDECAR_UPSTREAM: ['upstreams', 'sidecar'],
  GATEWAY_CONTROL_SOCKET: ['auth_cache', 'control_socket'],
};

/** Names the settings file when `--settings` is not given. */
export const SETTINGS_FILE_ENV = 'GATEWAY_SETTINGS';

export interface LoadSettingsOptions {
  /** A YAML settings file; default `$GATEWAY_SETTINGS`; neither: built-in defaults only. */
  file?: string;
  /** Variables from `SETTINGS_ENV` override the file; pass `process.env` to honour them. */
  env?: Readonly<Record<string, string | undefined>>;
  /** Values under the file (the CLI puts the target directory's `config_dir` here). */
  defaults?: RawSettings;
  /** Values over everything (e.g. the native runner's `config_dir` and port). */
  overrides?: RawSettings;
}

function isPlainObject(value: unknown): value is RawSettings {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Deep merge of plain objects; later layers win, arrays and scalars are replaced whole. */
function merge(base: RawSettings, layer: RawSettings): RawSettings {
  const out: RawSettings = { ...base };
  for (const [key, value] of Object.entries(layer)) {
    const current = out[key];
    out[key] = isPlainObject(current) && isPlainObject(value) ? merge(current, value) : value;
  }
  return out;
}

/** YAML `key:` with no value means "use the default", the same as leaving the key out. */
function dropNulls(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(dropNulls);
  if (!isPlainObject(value)) return value;
  const out: RawSettings = {};
  for (const [key, inner] of Object.entries(value)) {
    if (inner !== null) out[key] = dropNulls(inner);
  }
  return out;
}

function setAt(target: RawSettings, path: readonly string[], value: unknown): RawSettings {
  const [head, ...rest] = path;
  if (head === undefined) return target;
  if (rest.length === 0) return { ...target, [head]: value };
  const inner = isPlainObject(target[head]) ? (target[head] as RawSettings) : {};
  return { ...target, [head]: setAt(inner, rest, value) };
}

/** Validates raw settings; throws a SettingsError listing every problem at once. */
export function parseSettings(
  raw: unknown,
  source = 'settings',
  sourceOf?: (path: string) => string | undefined,
): Settings {
  const cleaned = raw === undefined || raw === null ? {} : dropNulls(raw);
  if (!isPlainObject(cleaned)) {
    throw new SettingsError(source, ['(settings): must be a mapping of keys to values']);
  }
  const result = settingsSchema.safeParse(cleaned);
  if (result.success) return result.data;
  throw new SettingsError(source, describeIssues(result.error.issues, sourceOf));
}

async function readYaml(file: string): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw new SettingsError(file, [`(settings): cannot read the file (${(err as Error).message})`]);
  }
  try {
    // CORE_SCHEMA: only true/false are booleans, no dates or other YAML 1.1 surprises.
    return yaml.load(text, { schema: yaml.CORE_SCHEMA, filename: file });
  } catch (err) {
    if (!(err instanceof yaml.YAMLException)) throw err;
    const where = err.mark ? ` at line ${err.mark.line + 1}, column ${err.mark.column + 1}` : '';
    throw new SettingsError(file, [`(settings): not valid YAML: ${err.reason}${where}`]);
  }
}

/**
 * Reads the settings from their layers — built-in defaults, `defaults`, the YAML file,
 * `GATEWAY_*` variables, `overrides` — and validates the result.
 */
export async function loadSettings(options: LoadSettingsOptions = {}): Promise<Settings> {
  const env = options.env ?? {};
  const file = options.file ?? (env[SETTINGS_FILE_ENV] || undefined);
  let raw: RawSettings = options.defaults ?? {};
  if (file !== undefined) {
    const fromFile = dropNulls(await readYaml(file)) ?? {};
    if (!isPlainObject(fromFile)) {
      throw new SettingsError(file, ['(settings): the file must hold a mapping of keys to values']);
    }
    raw = merge(raw, fromFile);
  }
  const fromEnv = new Map<string, string>();
  for (const [name, path] of Object.entries(SETTINGS_ENV)) {
    const value = env[name];
    if (value === undefined || value === '') continue;
    // Ports arrive as text; numbers are converted so the schema can check their range.
    raw = setAt(raw, path, /^\d+$/.test(value) ? Number(value) : value);
    fromEnv.set(path.join('.'), name);
  }
  if (options.overrides !== undefined) raw = merge(raw, options.overrides);
  const source = [file, ...fromEnv.values()].filter(Boolean).join(', ') || 'built-in defaults';
  return parseSettings(raw, source, (path) => fromEnv.get(path));
}
