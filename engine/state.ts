import type { CookieSecureMode } from './sessions/cookie.js';
import type { SessionStore } from './sessions/store.js';
import type { UserStore } from './users/store.js';
import type { ApiVersion } from './versions.js';

/** Settings of one engine, already validated. */
export interface EngineSettings {
  /** Native version of each supported major, newest major first. */
  versions: readonly ApiVersion[];
  adminUser: string;
  sessionIdleMs: number;
  maxSessions: number;
  maxBodyBytes: number;
  cookieSecure: CookieSecureMode;
  /** Locale of sessions that do not ask for one. */
  defaultLocale: string;
}

/** Everything a running engine holds; all of it is lost when the process ends. */
export interface EngineState {
  readonly settings: EngineSettings;
  readonly sessions: SessionStore;
  readonly users: UserStore;
  readonly now: () => number;
}
