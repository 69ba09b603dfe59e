import type { IncomingMessage } from 'node:http';

/** The API client the gateway authenticated, as nginx forwards it. */
export interface GatewayIdentity {
  type: 'GatewayIdentity';
  clientId: string;
  clientName: string;
  isAdmin: boolean;
}

function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** The gateway percent-encodes both (UTF-8, encodeURIComponent); decoded the same way. */
function decoded(raw: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    // A malformed escape is shown as sent rather than failing a call that does not need it.
    return raw;
  }
}

/**
 * Reads X-Client-Id and X-Client-Name (both percent-encoded UTF-8) and X-Client-Is-Admin. They
 * are only echoed back to the caller, never trusted for authorisation: the engine's own login
 * decides.
 */
export function gatewayIdentity(req: IncomingMessage): GatewayIdentity | null {
  const clientId = header(req, 'x-client-id');
  if (clientId === undefined) return null;
  return {
    type: 'GatewayIdentity',
    clientId: decoded(clientId),
    clientName: decoded(header(req, 'x-client-name') ?? ''),
    isAdmin: header(req, 'x-client-is-admin') === 'true',
  };
}
