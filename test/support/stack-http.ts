import { type HttpOptions, type HttpResponse, http } from './http.js';
import type { Stack } from './stack.js';

/**
 * A request to a stack as a caller makes it: to its base URL, trusting the certificate its
 * configuration directory holds now, the FQDN resolved to loopback.
 */
export async function callStack(
  stack: Stack,
  path: string,
  options: HttpOptions = {},
): Promise<HttpResponse> {
  return http(`${stack.baseUrl}${path}`, {
    ...options,
    tls: { ...(await stack.tls()) },
    connectTo: '127.0.0.1',
  });
}
