import type { EngineOptions } from './server.js';
import type { CookieSecureMode } from './sessions/cookie.js';
import { SettingsError } from './settings.js';
import { type ApiVersion, parseVersion } from './versions.js';

/** Every environment variable the engine reads, with its meaning. */
export const ENVIRONMENT: Readonly<Record<string, string>> = {
  ENGINE_HOST: 'address to listen on (default 127.0.0.1)',
  ENGINE_PORT: 'port to listen on (default 8080)',
  ENGINE_SOCKET: 'a unix socket path to listen on instead of host and port',
  ENGINE_ADMIN_USER: 'name of the first administrator (default admin)',
  ENGINE_ADMIN_PASSWORD:
    'its password; when unset, one is generated and printed at this start (the engine keeps no state: a new one at each start)',
  ENGINE_API_VERSIONS:
    'native version of each supported major, comma-separated (default 2.1.0,1.2.0)',
  ENGINE_SESSION_IDLE_SECONDS: 'idle time after which a session expires (default 1800)',
  ENGINE_MAX_SESSIONS: 'most sessions held at once (default 10000)',
  ENGINE_MAX_BODY_BYTES: 'largest request body accepted (default 65536)',
  ENGINE_COOKIE_SECURE:
    'auto (Secure when X-Forwarded-Proto is https), always or never (default auto)',
  ENGINE_LOCALE: 'locale of sessions that ask for none (default en_US)',
  ENGINE_LOG_REQUESTS:
    'true: one JSON line per request on stderr, with the gateway request id; false: none (default false)',
};

type Env = Readonly<Record<string, string | undefined>>;

/** Reads engine options from the environment; an empty variable counts as unset. */
export function optionsFromEnv(env: Env): EngineOptions {
  const problems: string[] = [];
  const text = (name: string): string | undefined => {
    const value = env[name]?.trim();
    return value === undefined || value === '' ? undefined : value;
  };
  const integer = (name: string): number | undefined => {
    const value = text(name);
    if (value === undefined) return undefined;
    if (!/^\d{1,15}$/.test(value)) {
      problems.push(`${name} must be a non-negative integer, not "${value}"`);
      return undefined;
    }
    return Number(value);
  };
  const versions = (): ApiVersion[] | undefined => {
    const value = text('ENGINE_API_VERSIONS');
    if (value === undefined) return undefined;
    return value.split(',').flatMap((part) => {
      const version = parseVersion(part);
      if (!version) problems.push(`ENGINE_API_VERSIONS: "${part.trim()}" is not major.minor.micro`);
      return version ? [version] : [];
    });
  };
  const flag = (name: string): boolean | undefined => {
    const value = text(name);
    if (value === undefined) return undefined;
    if (value !== 'true' && value !== 'false') {
      problems.push(`${name} must be true or false, not "${value}"`);
      return undefined;
    }
    return value === 'true';
  };
  const options: EngineOptions = {
    host: text('ENGINE_HOST') ?? '127.0.0.1',
    port: integer('ENGINE_PORT') ?? 8080,
    socket: text('ENGINE_SOCKET'),
    adminUser: text('ENGINE_ADMIN_USER'),
    // Not trimmed: a password may legitimately end in a space.
    adminPassword: env.ENGINE_ADMIN_PASSWORD === '' ? undefined : env.ENGINE_ADMIN_PASSWORD,
    versions: versions(),
    sessionIdleSeconds: integer('ENGINE_SESSION_IDLE_SECONDS'),
    maxSessions: integer('ENGINE_MAX_SESSIONS'),
    maxBodyBytes: integer('ENGINE_MAX_BODY_BYTES'),
    cookieSecure: text('ENGINE_COOKIE_SECURE') as CookieSecureMode | undefined,
    defaultLocale: text('ENGINE_LOCALE'),
    logRequests: flag('ENGINE_LOG_REQUESTS'),
  };
  if (options.port !== undefined && options.port > 65_535) {
    problems.push(`ENGINE_PORT must be at most 65535, not ${options.port}`);
  }
  if (problems.length > 0) throw new SettingsError(problems);
  return options;
}
