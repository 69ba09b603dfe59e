import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { listen } from '../common/listen.js';
import { createApp } from './app.js';
import { answerClientError } from './http/client-error.js';
import { logRequest } from './http/request-log.js';
import { ROUTES } from './routes/table.js';
import { SessionStore } from './sessions/store.js';
import { resolveSettings, type SettingsInput } from './settings.js';
import type { EngineSettings, EngineState } from './state.js';
import { UserStore } from './users/store.js';

/** How to start an engine in-process; everything is optional. */
export interface EngineOptions extends SettingsInput {
  /** Default 127.0.0.1. */
  host?: string;
  /** Default 0: any free port. */
  port?: number;
  /** A unix socket path to listen on instead of host and port (the native gateway uses one). */
  socket?: string;
  /** Password of the first administrator; generated (and returned) when absent. */
  adminPassword?: string;
  /** Clock in milliseconds; tests pass their own to expire sessions without waiting. */
  now?: () => number;
  /** Where unexpected errors are reported; default stderr. */
  log?: (line: string) => void;
  /** One log line per request, with the gateway's request id (default false: nginx's access log has a line per request with the same id). */
  logRequests?: boolean;
}

/** A listening engine. */
export interface RunningEngine {
  /** `http://host:port` without a trailing slash, or `unix:/path` for a socket. */
  url: string;
  host: string;
  port: number;
  settings: EngineSettings;
  adminUser: string;
  /** The administrator's password when the engine generated it, to be shown once. */
  generatedAdminPassword: string | undefined;
  /** Stops listening and drops open connections; every session is gone with it. */
  close(): Promise<void>;
}

/** Starts an engine with fresh, empty state and its first administrator. */
export async function startEngine(options: EngineOptions = {}): Promise<RunningEngine> {
  const settings = resolveSettings(options);
  const now = options.now ?? Date.now;
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const generatedAdminPassword =
    options.adminPassword === undefined ? randomBytes(18).toString('base64url') : undefined;
  const adminPassword = options.adminPassword ?? generatedAdminPassword!;
  if (adminPassword.length === 0) throw new Error('the admin password must not be empty');

  const users = new UserStore(now);
  await users.create(settings.adminUser, { password: adminPassword, admin: true });
  const state: EngineState = {
    settings,
    sessions: new SessionStore({
      idleMs: settings.sessionIdleMs,
      maxSessions: settings.maxSessions,
      now,
    }),
    users,
    now,
  };

  // Behind the gateway, X-Client-Id and X-Client-Name are percent-encoded names of up to 1024
  // characters (12 KB each in the worst case): more than Node's default 16 KB of headers.
  const app = createApp(state, ROUTES, log);
  const logRequests = options.logRequests ?? false;
  const server = createServer({ maxHeaderSize: 64 * 1024 }, (req, res) => {
    if (logRequests) logRequest(req, res, log);
    app(req, res);
  });
  server.on('clientError', answerClientError);
  const url = await listen(
    server,
    options.socket !== undefined
      ? { socket: options.socket }
      : { host: options.host ?? '127.0.0.1', port: options.port ?? 0 },
  );
  const address = server.address();
  const tcp = typeof address === 'object' && address !== null ? (address as AddressInfo) : null;
  return {
    url,
    host: tcp?.address ?? '',
    port: tcp?.port ?? 0,
    settings,
    adminUser: settings.adminUser,
    generatedAdminPassword,
    close: async () => {
      const closed = once(server, 'close');
      server.close();
      server.closeAllConnections();
      await closed;
    },
  };
}
