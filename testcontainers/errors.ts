/**
 * Why a gateway did not start: `code` is stable for callers, the message says what to fix and
 * quotes the part of the log that says why.
 */
export class GatewayStartError extends Error {
  constructor(
    readonly code: 'INVALID_OPTIONS' | 'IMAGE_MISSING' | 'IMAGE_BUILD_FAILED' | 'NOT_STARTED',
    message: string,
  ) {
    super(message);
    this.name = 'GatewayStartError';
  }
}
