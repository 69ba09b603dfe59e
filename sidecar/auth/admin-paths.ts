import type { IncomingHttpHeaders } from 'node:http';

const MANAGEMENT_PREFIX = '/v1/management';
const MANAGEMENT_WORD = /management/i;

/**
 * Whether the original request needs an admin credential. nginx says so explicitly for
 * its management location (`X-Gateway-Require-Admin: true`); independently, the original
 * URI is normalised the way nginx matches locations (percent-decoding, merged slashes,
 * dot segments) so `/v1//management/` or `/v1/%6danagement/` cannot slip past.
 */
export function requiresAdmin(headers: IncomingHttpHeaders): boolean {
  if (headers['x-gateway-require-admin'] === 'true') return true;
  const uri = headers['x-original-uri'];
  if (typeof uri !== 'string') return false;
  // Asked on every miss: a URI that neither names the management prefix's last segment in some
  // case nor escapes anything cannot normalise to it (normalising only drops and merges).
  // Stryker disable next-line ConditionalExpression,StringLiteral: equivalent (the path below says the same)
  if (!uri.includes('%') && !MANAGEMENT_WORD.test(uri)) return false;
  const path = normalisePath(uri.split('?', 1)[0]!);
  return path === MANAGEMENT_PREFIX || path.startsWith(`${MANAGEMENT_PREFIX}/`);
}

function normalisePath(raw: string): string {
  let decoded: string;
  try {
    decoded = decodeURIComponent(raw);
  } catch {
    decoded = raw;
  }
  const out: string[] = [];
  for (const segment of decoded.split('/')) {
    if (segment === '' || segment === '.') continue;
    if (segment === '..') out.pop();
    else out.push(segment);
  }
  return `/${out.join('/')}`.toLowerCase();
}
