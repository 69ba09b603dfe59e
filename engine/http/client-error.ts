import type { Socket } from 'node:net';
import { errorResult } from '../envelope.js';
import { HeadersTooLargeError, MalformedRequestError } from '../errors.js';

/**
 * Answers requests Node cannot even parse (oversized headers, a garbled request line) with the
 * same ErrorResult as everything else, instead of Node's bare 400 or 431.
 */
export function answerClientError(err: Error & { code?: string }, socket: Socket): void {
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  const error =
    err.code === 'HPE_HEADER_OVERFLOW'
      ? new HeadersTooLargeError()
      : new MalformedRequestError('The HTTP request could not be parsed.');
  const body = JSON.stringify(errorResult(error));
  const reason = error.status === 431 ? 'Request Header Fields Too Large' : 'Bad Request';
  socket.end(
    `HTTP/1.1 ${error.status} ${reason}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}
