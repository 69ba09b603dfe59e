/**
 * TRACING_OTLP_ENDPOINT: the collector's OTLP/HTTP traces URL (the settings file's
 * tracing.otlp_endpoint, which the compose file and the native runner pass on). Empty or
 * unset: no span is exported and the SDK is never loaded. Anything but an http(s) URL stops
 * the start-up, never a silent "off".
 */
export function readTracingEndpoint(env: NodeJS.ProcessEnv): string | null {
  const value = (env.TRACING_OTLP_ENDPOINT ?? '').trim();
  if (value === '') return null;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new Error(`TRACING_OTLP_ENDPOINT must be an http(s) URL, got ${JSON.stringify(value)}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new Error(`TRACING_OTLP_ENDPOINT must be an http(s) URL, got ${JSON.stringify(value)}`);
  }
  // A user name or password in it would reach the log line that names the endpoint.
  if (url.username !== '' || url.password !== '') {
    throw new Error('TRACING_OTLP_ENDPOINT must not carry a user name or password');
  }
  return url.href;
}

/**
 * TRACING_NGINX_SPANS_LISTEN: where nginx's span records arrive (the settings' tracing.
 * nginx_spans_to), e.g. 127.0.0.1:4319. Unset: nginx's own spans are not received.
 */
export function readNginxSpansListen(env: NodeJS.ProcessEnv): string | null {
  const value = (env.TRACING_NGINX_SPANS_LISTEN ?? '').trim();
  return value === '' ? null : value;
}
