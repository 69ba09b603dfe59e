import type { EngineCall, Query } from './call.js';
import { CookieJar } from './cookie-jar.js';
import {
  apiError,
  EngineClientError,
  EngineHttpError,
  EngineUnsupportedVersionError,
  EngineVersionError,
} from './errors.js';
import { type TlsOptions, Transport } from './transport.js';
import {
  type ApiErrorBody,
  type ApiSession,
  type ApiVersion,
  CLIENT_VERSIONS,
  type Identity,
  type LoginResult,
  type LoginTarget,
  type NegotiatedSession,
  type PublicSystemInfo,
} from './types.js';
import { UsersApi } from './users.js';

export interface EngineClientOptions {
  /** Where the engine is: `https://gateway:8443` (a path-less origin) or with a path prefix. */
  baseUrl: string | URL;
  /** The versions this client speaks, one per major; default CLIENT_VERSIONS. */
  versions?: readonly ApiVersion[];
  /** Sent as the Authorization header on every call, e.g. `apk <id>.<secret>` for the gateway. */
  authorization?: string;
  /** More headers for every call. */
  headers?: Readonly<Record<string, string>>;
  /** For an HTTPS base URL: the CA to trust and other TLS settings. */
  tls?: TlsOptions;
  /** Default 30 s. */
  timeoutMs?: number;
  /** Locale to ask for; the engine's default when absent. */
  locale?: string;
}

/** A client of one engine: negotiates a version, logs in, and keeps the latest session cookie. */
export class EngineClient implements EngineCall {
  /** The engine's users. */
  readonly users: UsersApi;
  private readonly base: URL;
  private readonly versions: readonly ApiVersion[];
  private readonly transport: Transport;
  private readonly jar = new CookieJar();
  private negotiated: NegotiatedSession | undefined;

  constructor(private readonly options: EngineClientOptions) {
    this.base = new URL(options.baseUrl);
    if (this.base.protocol !== 'http:' && this.base.protocol !== 'https:') {
      throw new EngineClientError(`baseUrl must be http or https, not ${this.base.protocol}`);
    }
    this.versions = [...(options.versions ?? CLIENT_VERSIONS)].sort((a, b) => b.major - a.major);
    this.transport = new Transport(
      this.base.protocol === 'https:',
      options.tls ?? {},
      options.timeoutMs ?? 30_000,
    );
    this.users = new UsersApi(this);
  }

  /** The negotiated session, once `open` succeeded. */
  get session(): NegotiatedSession | undefined {
    return this.negotiated;
  }

  /**
   * Opens a session, trying each major this client speaks, newest first, and keeps the first the
   * engine accepts. Throws EngineVersionError when the engine accepts none.
   */
  async open(): Promise<NegotiatedSession> {
    const refusals: string[] = [];
    for (const requested of this.versions) {
      try {
        const result = await this.call<ApiSession>('POST', '/resources/json/service/session', {
          body: {
            type: 'APISession',
            version: { type: 'APIVersion', ...requested },
            ...(this.options.locale ? { locale: this.options.locale } : {}),
          },
        });
        const native = result.version;
        // An engine answering with another major would speak something this client was not
        // written for; treat it like a refusal and try the next one.
        if (native?.major !== requested.major) {
          refusals.push(`asked ${requested.major}, got ${native?.major}`);
          continue;
        }
        const nativeVersion = { major: native.major, minor: native.minor, micro: native.micro };
        this.negotiated = {
          requested,
          native: nativeVersion,
          // The engine translates down to an older minor we asked for; when it is the older
          // one, only what it knows can be used.
          effective: native.minor < requested.minor ? nativeVersion : { ...requested },
          locale: result.locale,
        };
        return this.negotiated;
      } catch (err) {
        if (!(err instanceof EngineUnsupportedVersionError)) throw err;
        refusals.push(err.details);
      }
    }
    throw new EngineVersionError(this.versions, refusals.join('; '));
  }

  /** Logs the open session in; the engine's new cookie replaces the old one. */
  login(username: string, password: string, target: LoginTarget = 'SYSTEM'): Promise<LoginResult> {
    return this.call<LoginResult>('POST', '/resources/json/service/login', {
      body: { type: 'LoginRequest', username, password, target },
    });
  }

  /** `open` then `login`. */
  async connect(username: string, password: string, target?: LoginTarget): Promise<LoginResult> {
    await this.open();
    return this.login(username, password, target);
  }

  /** The current session as the engine sees it. */
  current(): Promise<ApiSession> {
    return this.call<ApiSession>('GET', '/resources/json/service/session');
  }

  /** The product and the API versions the engine speaks. */
  about(): Promise<PublicSystemInfo> {
    return this.call<PublicSystemInfo>('GET', '/resources/json/service/about');
  }

  /** The logged-in user and, behind the gateway, the API client. */
  whoami(): Promise<Identity> {
    return this.call<Identity>('GET', '/resources/json/service/whoami');
  }

  /** Ends the session on the engine and forgets its cookie. */
  async logout(): Promise<void> {
    await this.call('DELETE', '/resources/json/service/session');
    this.jar.clear();
    this.negotiated = undefined;
  }

  /** Closes pooled connections; the session on the engine is left to expire. */
  close(): void {
    this.transport.close();
  }

  /**
   * One call: sends the latest cookie, stores any new one, and returns the `result` of an
   * OKResult or throws the typed error of an ErrorResult.
   */
  async call<T = unknown>(
    method: 'GET' | 'POST' | 'DELETE',
    path: string,
    input: { query?: Query; body?: unknown } = {},
  ): Promise<T> {
    const url = new URL(this.base);
    url.pathname = `${this.base.pathname.replace(/\/+$/, '')}${path}`;
    url.search = '';
    for (const [name, value] of Object.entries(input.query ?? {})) {
      if (value !== undefined) url.searchParams.append(name, String(value));
    }
    const headers: Record<string, string> = { Accept: 'application/json', ...this.options.headers };
    if (this.options.authorization !== undefined)
      headers.Authorization = this.options.authorization;
    const cookie = this.jar.header();
    if (cookie !== undefined) headers.Cookie = cookie;
    let body: string | undefined;
    if (input.body !== undefined) {
      body = JSON.stringify(input.body);
      headers['Content-Type'] = 'application/json';
      headers['Content-Length'] = String(Buffer.byteLength(body));
    }
    const answer = await this.transport.send(url, method, headers, body);
    this.jar.store(answer.headers['set-cookie']);
    return unwrap<T>(answer.status, answer.body);
  }
}

function unwrap<T>(status: number, text: string): T {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new EngineHttpError(status, text);
  }
  const envelope = parsed as { type?: unknown; status?: unknown; result?: T; error?: ApiErrorBody };
  if (envelope?.type === 'OKResult' && envelope.status === 'OK') return envelope.result as T;
  if (envelope?.type === 'ErrorResult' && typeof envelope.error?.id === 'string') {
    throw apiError(status, envelope.error);
  }
  throw new EngineHttpError(status, text);
}
