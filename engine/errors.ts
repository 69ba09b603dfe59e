/** One problem with one input field, as reported in `APIError.diagnoses`. */
export interface Diagnosis {
  type: 'Diagnosis';
  field: string;
  message: string;
}

/** Base of every error the engine answers on purpose: a stable id, an HTTP status, a hint. */
export class EngineError extends Error {
  readonly diagnoses: readonly Diagnosis[];
  readonly headers: Readonly<Record<string, string>>;

  constructor(
    readonly id: string,
    readonly status: number,
    message: string,
    readonly action: string | null = null,
    options: { diagnoses?: readonly Diagnosis[]; headers?: Record<string, string> } = {},
  ) {
    super(message);
    this.name = new.target.name;
    this.diagnoses = options.diagnoses ?? [];
    this.headers = options.headers ?? {};
  }
}

export class MalformedRequestError extends EngineError {
  constructor(message: string) {
    super('exception.webservices.request.malformed', 400, message, 'Send a well-formed JSON body.');
  }
}

export class InvalidRequestError extends EngineError {
  constructor(message: string, diagnoses: readonly Diagnosis[] = []) {
    super(
      'exception.webservices.request.invalid',
      400,
      message,
      'Correct the fields listed in diagnoses; see GET /api for the fields of each call.',
      { diagnoses },
    );
  }
}

export class BodyTooLargeError extends EngineError {
  constructor(limitBytes: number) {
    super(
      'exception.webservices.request.too.large',
      413,
      `The request body is larger than ${limitBytes} bytes.`,
      'Send a smaller body.',
    );
  }
}

export class HeadersTooLargeError extends EngineError {
  constructor() {
    super(
      'exception.webservices.request.headers.too.large',
      431,
      'The request headers are too large.',
      'Send fewer or shorter headers (cookies included).',
    );
  }
}

export class UnsupportedMediaTypeError extends EngineError {
  constructor(message: string) {
    super(
      'exception.webservices.request.unsupported.media.type',
      415,
      message,
      'Send the body as UTF-8 JSON with Content-Type: application/json.',
    );
  }
}

export class EndpointMissingError extends EngineError {
  constructor(method: string, path: string) {
    super(
      'exception.webservices.endpoint.missing',
      404,
      `No call ${method} ${path} exists.`,
      'See GET /api for every call.',
    );
  }
}

export class MethodNotAllowedError extends EngineError {
  constructor(method: string, path: string, allowed: readonly string[]) {
    super(
      'exception.webservices.method.not.allowed',
      405,
      `${method} is not allowed on ${path}; allowed: ${allowed.join(', ')}.`,
      'Use one of the allowed methods.',
      { headers: { Allow: allowed.join(', ') } },
    );
  }
}

export class UnsupportedVersionError extends EngineError {
  constructor(requestedMajor: number, supportedMajors: readonly number[]) {
    super(
      'exception.webservices.session.invalid.version',
      400,
      `API major version ${requestedMajor} is not supported; supported major versions: ${supportedMajors.join(', ')}.`,
      'Open the session with one of the supported major versions.',
      {
        diagnoses: [
          {
            type: 'Diagnosis',
            field: 'version.major',
            message: `supported: ${supportedMajors.join(', ')}`,
          },
        ],
      },
    );
  }
}

export class SessionMissingError extends EngineError {
  constructor() {
    super(
      'exception.webservices.session.missing',
      401,
      'This call needs a session, and the request carries no session cookie.',
      'Open a session with POST /resources/json/service/session, then log in.',
    );
  }
}

export class SessionInvalidError extends EngineError {
  constructor() {
    super(
      'exception.webservices.session.invalid',
      401,
      'The session cookie does not name a live session: it expired, was replaced by a login, ended, or the engine restarted.',
      'Open a new session with POST /resources/json/service/session, then log in.',
    );
  }
}

export class SessionUnauthenticatedError extends EngineError {
  constructor() {
    super(
      'exception.webservices.session.unauthenticated',
      403,
      'This session has not logged in; the only call it may make is the login.',
      'Log in with POST /resources/json/service/login.',
    );
  }
}

export class SessionLimitError extends EngineError {
  constructor(maxSessions: number, retryAfterSeconds: number) {
    super(
      'exception.webservices.session.limit',
      503,
      `The engine already holds its maximum of ${maxSessions} sessions.`,
      'Retry later, or end unused sessions with DELETE /resources/json/service/session.',
      { headers: { 'Retry-After': String(retryAfterSeconds) } },
    );
  }
}

export class LoginFailedError extends EngineError {
  constructor() {
    super(
      'exception.webservices.login.failed',
      401,
      'Login failed: unknown user, wrong password, wrong target, or disabled user.',
      'Check the user name, password and target.',
    );
  }
}

export class AlreadyAuthenticatedError extends EngineError {
  constructor() {
    super(
      'exception.webservices.login.already.authenticated',
      409,
      'This session is already logged in.',
      'To log in as another user, end this session and open a new one.',
    );
  }
}

export class PermissionDeniedError extends EngineError {
  constructor(message: string) {
    super('exception.webservices.permission.denied', 403, message, 'Log in as an administrator.');
  }
}

export class ObjectMissingError extends EngineError {
  constructor(kind: string, name: string) {
    super('exception.executor.object.missing', 404, `${kind} "${name}" does not exist.`, null);
  }
}

export class ObjectExistsError extends EngineError {
  constructor(kind: string, name: string) {
    super(
      'exception.executor.object.exists',
      409,
      `${kind} "${name}" already exists.`,
      `Update it with POST on its own URL instead.`,
    );
  }
}

export class ObjectConflictError extends EngineError {
  constructor(message: string, action: string) {
    super('exception.executor.object.conflict', 409, message, action);
  }
}

export class InternalError extends EngineError {
  constructor() {
    super('exception.webservices.internal', 500, 'The engine failed to answer this call.', null);
  }
}
