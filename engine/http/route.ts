import type { FieldDef, RecordDef } from '../schema/fields.js';
import type { InputMode } from '../schema/validate.js';
import type { Session } from '../sessions/store.js';
import type { EngineState } from '../state.js';
import type { StoredUser } from '../users/store.js';
import type { ApiVersion } from '../versions.js';
import type { GatewayIdentity } from './gateway-identity.js';

/**
 * Who may call a route:
 * - `none`: no session needed (a session cookie, if sent, is looked up but never required);
 * - `login`: any live session, logged in or not (only the login itself);
 * - `user`: a logged-in session;
 * - `admin`: a session logged in as an administrator.
 */
export type Access = 'none' | 'login' | 'user' | 'admin';

/** What a handler sees of one call, and what it may set on the response. */
export interface CallContext {
  readonly state: EngineState;
  /** The engine's whole route table (the reference page lists it). */
  readonly routes: readonly RouteSpec[];
  readonly params: Readonly<Record<string, string>>;
  readonly query: Readonly<Record<string, unknown>>;
  readonly body: Record<string, unknown> | undefined;
  /** The caller's session cookie value, when it names a live session. */
  readonly sessionId: string | undefined;
  readonly session: Session | undefined;
  /** The logged-in user, for `user` and `admin` routes. */
  readonly user: StoredUser | undefined;
  readonly gateway: GatewayIdentity | null;
  /** Whether the client reached the engine over HTTPS, for the cookie's Secure flag. */
  readonly secure: boolean;
  /** The version results are translated to; a handler that opens a session sets it. */
  version: ApiVersion;
  setCookie: string | undefined;
}

/** One row of the route table: the single source for routing, validation and `GET /api`. */
export interface RouteSpec {
  method: 'GET' | 'POST' | 'DELETE';
  /** Express path pattern, e.g. `/resources/json/service/user/:name`. */
  path: string;
  summary: string;
  access: Access;
  /**
   * A probe: when the caller's session is missing, dead or not logged in, the refusal still
   * comes as an ErrorResult but with HTTP 200, as real engines answer `GET session`, so a client
   * can ask whether it has a session without mistaking the answer for an engine fault.
   */
  probe?: boolean;
  /** Query parameters; every GET input comes this way. */
  query?: readonly FieldDef[];
  /** JSON body: the record it must be, and whether it creates (defaults) or updates (partial). */
  body?: { record: RecordDef; mode: InputMode };
  /** The record type of the result, or `HTML` for the reference page. */
  result: string;
  handler: (ctx: CallContext) => unknown;
}
