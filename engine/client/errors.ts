import type { ApiErrorBody, ApiVersion, Diagnosis } from './types.js';

/** Base of every error the client throws. */
export class EngineClientError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** The answer was not an engine envelope: a gateway refusal, a proxy error page, a non-JSON body. */
export class EngineHttpError extends EngineClientError {
  constructor(
    readonly status: number,
    readonly body: string,
  ) {
    super(`HTTP ${status} without an engine result: ${body.slice(0, 200)}`);
  }
}

/** No major version is spoken by both this client and the engine. */
export class EngineVersionError extends EngineClientError {
  constructor(
    readonly clientVersions: readonly ApiVersion[],
    readonly engineSaid: string,
  ) {
    super(
      `No API major version in common: this client speaks ${clientVersions.map((v) => v.major).join(', ')}; the engine refused each (${engineSaid})`,
    );
  }
}

/** An `ErrorResult` from the engine; subclasses name the kind, `id` the exact error. */
export class EngineApiError extends EngineClientError {
  readonly id: string;
  readonly details: string;
  readonly action: string | null;
  readonly diagnoses: readonly Diagnosis[];

  constructor(
    readonly status: number,
    error: ApiErrorBody,
  ) {
    super(`${error.id} (HTTP ${status}): ${error.details}`);
    this.id = error.id;
    this.details = error.details;
    this.action = error.action;
    this.diagnoses = error.diagnoses ?? [];
  }
}

/** The request was malformed, invalid, too large or of the wrong media type. */
export class EngineRequestError extends EngineApiError {}
/** The engine does not support the requested major version. */
export class EngineUnsupportedVersionError extends EngineApiError {}
/** No session, or the session expired, ended, was replaced, or the engine restarted. */
export class EngineSessionError extends EngineApiError {}
/** The session has not logged in. */
export class EngineUnauthenticatedError extends EngineApiError {}
/** The engine holds its maximum number of sessions. */
export class EngineSessionLimitError extends EngineApiError {}
/** Wrong user name, password or target. */
export class EngineLoginError extends EngineApiError {}
/** The logged-in user may not do this. */
export class EnginePermissionError extends EngineApiError {}
/** The object or the endpoint does not exist. */
export class EngineNotFoundError extends EngineApiError {}
/** The call conflicts with the current state (object exists, last administrator, logged in). */
export class EngineConflictError extends EngineApiError {}

const BY_ID: Readonly<Record<string, typeof EngineApiError>> = {
  'exception.webservices.session.invalid.version': EngineUnsupportedVersionError,
  'exception.webservices.session.missing': EngineSessionError,
  'exception.webservices.session.invalid': EngineSessionError,
  'exception.webservices.session.unauthenticated': EngineUnauthenticatedError,
  'exception.webservices.session.limit': EngineSessionLimitError,
  'exception.webservices.login.failed': EngineLoginError,
  'exception.webservices.login.already.authenticated': EngineConflictError,
  'exception.webservices.permission.denied': EnginePermissionError,
  'exception.webservices.endpoint.missing': EngineNotFoundError,
  'exception.executor.object.missing': EngineNotFoundError,
  'exception.executor.object.exists': EngineConflictError,
  'exception.executor.object.conflict': EngineConflictError,
};

/** The typed error for an `ErrorResult`; ids this client does not know fall back by status. */
export function apiError(status: number, error: ApiErrorBody): EngineApiError {
  const known = BY_ID[error.id];
  if (known) return new known(status, error);
  if (error.id.startsWith('exception.webservices.request.') || status === 400) {
    return new EngineRequestError(status, error);
  }
  return new EngineApiError(status, error);
}
