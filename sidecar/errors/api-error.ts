import { SIDECAR_PROOF } from '../../common/contract.js';

/** One entry of the JSON error body shared by `/auth` and every management route. */
export interface ErrorDetail {
  code: string;
  message: string;
  field?: string;
}

/** The single error shape of the sidecar's HTTP API: `{"errors":[{code,message,field?}]}`. */
export interface ErrorBody {
  errors: ErrorDetail[];
}

/** Base of every error the sidecar answers deliberately; anything else becomes a bare 500. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly details: ErrorDetail[],
    readonly headers: Record<string, string> = {},
  ) {
    super(details.map((d) => d.message).join('; '));
    this.name = new.target.name;
  }

  body(): ErrorBody {
    return { errors: this.details };
  }
}

export class ValidationError extends ApiError {
  constructor(details: ErrorDetail[]) {
    super(400, details);
  }
}

export class InvalidJsonError extends ApiError {
  constructor() {
    super(400, [{ code: 'INVALID_JSON', message: 'The request body is not valid JSON.' }]);
  }
}

/** A compressed body (Content-Encoding gzip, deflate or br) that does not decompress. */
export class InvalidContentEncodingError extends ApiError {
  constructor() {
    super(400, [
      {
        code: 'INVALID_CONTENT_ENCODING',
        message: 'The request body does not decode as its Content-Encoding says.',
      },
    ]);
  }
}

export class UnsupportedMediaTypeError extends ApiError {
  constructor() {
    super(415, [
      {
        code: 'UNSUPPORTED_MEDIA_TYPE',
        message: 'The request body must be JSON in UTF-8 (Content-Type: application/json).',
      },
    ]);
  }
}

export class PayloadTooLargeError extends ApiError {
  constructor(limitBytes: number) {
    super(413, [
      {
        code: 'PAYLOAD_TOO_LARGE',
        message: `The request body is larger than ${limitBytes} bytes.`,
      },
    ]);
  }
}

export class NotFoundError extends ApiError {
  constructor(message = 'No such resource.') {
    super(404, [{ code: 'NOT_FOUND', message }]);
  }
}

export class MethodNotAllowedError extends ApiError {
  constructor(allowed: string[]) {
    super(
      405,
      [{ code: 'METHOD_NOT_ALLOWED', message: `Allowed methods: ${allowed.join(', ')}.` }],
      {
        Allow: allowed.join(', '),
      },
    );
  }
}

export class ConflictError extends ApiError {
  constructor(field: string, message: string) {
    super(409, [{ code: 'CONFLICT', message, field }]);
  }
}

export class ForbiddenError extends ApiError {
  constructor(message = 'This credential is valid but not allowed to do this.') {
    super(403, [{ code: 'FORBIDDEN', message }]);
  }
}

/**
 * The request did not come from the gateway's nginx: no valid proof (X-Gateway-Proof). Refused
 * before any setting header is read (docs/decisions/20261202-sidecar-trusts-only-nginx.md).
 */
export class GatewayProofRequiredError extends ApiError {
  constructor() {
    super(403, [
      {
        code: SIDECAR_PROOF.code,
        message:
          "Only the gateway's nginx may ask the sidecar: the request carries no valid proof.",
      },
    ]);
  }
}

/** Infrastructure fault (database unreachable): the caller gets 503 and may retry. */
export class ServiceUnavailableError extends ApiError {
  /** `fault` is what went wrong, for the log only: the caller sees the fixed message. */
  constructor(readonly fault?: unknown) {
    super(503, [
      {
        code: 'SERVICE_UNAVAILABLE',
        message: 'The gateway cannot reach its database; retry later.',
      },
    ]);
  }
}

export const INTERNAL_ERROR_BODY: ErrorBody = {
  errors: [{ code: 'INTERNAL', message: 'Internal error.' }],
};

/** JSON as pure ASCII, so the same text is safe in an HTTP header (X-Auth-Error-Body). */
export function asciiJson(value: unknown): string {
  return JSON.stringify(value).replace(
    /[\u007f-\uffff]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}
