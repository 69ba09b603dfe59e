/**
 * GATEWAY_APP_UPSTREAM for the native run: which application nginx fronts. Unset or empty:
 * null, the bundled engine (started on a socket of the home). Otherwise the operator's own,
 * which the run does not start: `http://host:port` (as an operator writes it) or what
 * `upstreams.app` takes (`host:port`, `[ipv6]:port`, `unix:/path`; the settings validate it).
 */
export function nativeAppUpstream(value: string | undefined): string | null {
  if (value === undefined || value.trim() === '') return null;
  const url = /^http:\/\/([^/?#]+)\/?$/i.exec(value.trim());
  if (url) return url[1]!;
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(value)) {
    throw new Error(
      `GATEWAY_APP_UPSTREAM=${value}: give the application as http://host:port (nginx speaks plain HTTP to it, on this machine), host:port or unix:/path, without a path`,
    );
  }
  return value.trim();
}
