import type { CookieSecureMode } from './sessions/cookie.js';
import type { EngineSettings } from './state.js';
import { type ApiVersion, DEFAULT_NATIVE_VERSIONS, formatVersion } from './versions.js';

/** Settings a caller may give; every one has a default. */
export interface SettingsInput {
  /** Native version of each supported major, one per major, in any order. */
  versions?: readonly ApiVersion[];
  adminUser?: string;
  /** Seconds a session may stay unused before it expires. */
  sessionIdleSeconds?: number;
  maxSessions?: number;
  maxBodyBytes?: number;
  cookieSecure?: CookieSecureMode;
  defaultLocale?: string;
}

/** Settings that cannot work; lists every problem at once. */
export class SettingsError extends Error {
  constructor(readonly problems: readonly string[]) {
    super(`invalid engine settings:\n  ${problems.join('\n  ')}`);
    this.name = 'SettingsError';
  }
}

const USER_NAME = /^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$/;
const LOCALE = /^[a-z]{2,3}_[A-Z]{2}$/;

function checkInteger(problems: string[], name: string, value: number, min: number, max: number) {
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    problems.push(`${name} must be an integer from ${min} to ${max}, not ${value}`);
  }
}

/** Validates settings and fills in defaults; throws SettingsError listing every problem. */
export function resolveSettings(input: SettingsInput): EngineSettings {
  const problems: string[] = [];
  const versions = [...(input.versions ?? DEFAULT_NATIVE_VERSIONS)].sort(
    (a, b) => b.major - a.major,
  );
  if (versions.length === 0) problems.push('at least one API version must be supported');
  const majors = new Set<number>();
  for (const v of versions) {
    if (majors.has(v.major))
      problems.push(`API major ${v.major} is listed twice; give one native version per major`);
    majors.add(v.major);
    for (const part of [v.major, v.minor, v.micro]) {
      if (!Number.isSafeInteger(part) || part < 0 || part > 999_999) {
        problems.push(`API version ${formatVersion(v)} must be made of integers from 0 to 999999`);
        break;
      }
    }
  }
  const adminUser = input.adminUser ?? 'admin';
  if (!USER_NAME.test(adminUser)) {
    problems.push(
      `admin user "${adminUser}" must be 1-64 letters, digits, . _ @ - (not starting with a symbol)`,
    );
  }
  const sessionIdleSeconds = input.sessionIdleSeconds ?? 1800;
  checkInteger(problems, 'session idle timeout (seconds)', sessionIdleSeconds, 1, 7 * 24 * 3600);
  const maxSessions = input.maxSessions ?? 10_000;
  checkInteger(problems, 'session cap', maxSessions, 1, 10_000_000);
  const maxBodyBytes = input.maxBodyBytes ?? 64 * 1024;
  checkInteger(problems, 'body limit (bytes)', maxBodyBytes, 1024, 64 * 1024 * 1024);
  const cookieSecure = input.cookieSecure ?? 'auto';
  if (!['auto', 'always', 'never'].includes(cookieSecure)) {
    problems.push(`cookie Secure mode must be auto, always or never, not ${cookieSecure}`);
  }
  const defaultLocale = input.defaultLocale ?? 'en_US';
  if (!LOCALE.test(defaultLocale))
    problems.push(`locale must look like en_US, not ${defaultLocale}`);
  if (problems.length > 0) throw new SettingsError(problems);
  return {
    versions,
    adminUser,
    sessionIdleMs: sessionIdleSeconds * 1000,
    maxSessions,
    maxBodyBytes,
    cookieSecure,
    defaultLocale,
  };
}
