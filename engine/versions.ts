/** An API version as the protocol spells it (`APIVersion`). */
export interface ApiVersion {
  major: number;
  minor: number;
  micro: number;
}

/** The versions this engine build can speak at most, one per major: the default configuration. */
export const DEFAULT_NATIVE_VERSIONS: readonly ApiVersion[] = [
  { major: 2, minor: 1, micro: 0 },
  { major: 1, minor: 2, micro: 0 },
];

/** Orders by major then minor; micro releases never change the shape of records. */
export function compareFeatures(a: ApiVersion, b: ApiVersion): number {
  return a.major - b.major || a.minor - b.minor;
}

/** `2.1.0` */
export function formatVersion(v: ApiVersion): string {
  return `${v.major}.${v.minor}.${v.micro}`;
}

const VERSION_PATTERN = /^(\d{1,6})\.(\d{1,6})\.(\d{1,6})$/;

/** Parses `M.m.u`; undefined when the text is not exactly that. */
export function parseVersion(text: string): ApiVersion | undefined {
  const m = VERSION_PATTERN.exec(text.trim());
  if (!m) return undefined;
  return { major: Number(m[1]), minor: Number(m[2]), micro: Number(m[3]) };
}

/**
 * The version a session runs at: the requested one, capped at the native version of the same
 * major, because the engine cannot know fields from a minor release it has not reached.
 */
export function sessionVersion(requested: ApiVersion, native: ApiVersion): ApiVersion {
  return compareFeatures(requested, native) <= 0 ? requested : native;
}
