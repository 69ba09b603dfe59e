import { isIP } from 'node:net';
import { z } from 'zod';

// What nginx's `geo` takes: an address or an address with a prefix length. Hex digits, dots and
// colons only, so nothing else can reach the rendered block.
const ADDRESS_TEXT = /^[0-9A-Fa-f.:]{2,45}(?:\/\d{1,3})?$/;

/** Why one `request_id.trusted_proxies` entry is refused, or null when it names proxies. */
export function proxyAddressProblem(value: string): string | null {
  if (!ADDRESS_TEXT.test(value)) {
    return `expected an IP address or a CIDR block such as 10.0.0.0/8, got ${JSON.stringify(value)}`;
  }
  const [address, bits] = value.split('/') as [string, string | undefined];
  const family = isIP(address);
  if (family === 0) return `${JSON.stringify(address)} is not an IPv4 or IPv6 address`;
  const longest = family === 4 ? 32 : 128;
  // No prefix length: the one address. `!(<=)` below also refuses anything not a number.
  const prefix = bits === undefined ? longest : Number(bits);
  // The whole internet: any caller could choose the id that every log then shows.
  if (prefix === 0) {
    return `${value} is every address, so an id from the open internet would be trusted; name the balancer's addresses`;
  }
  if (!(prefix <= longest)) return `the prefix length of ${value} must be at most ${longest}`;
  return null;
}

const proxyAddress = z.string().refine((value) => proxyAddressProblem(value) === null, {
  error: (issue) => proxyAddressProblem(issue.input as string) ?? undefined,
});

/**
 * Request ids (docs/decisions/20261125-trusted-request-id.md): nginx keeps a caller's
 * `X-Request-Id` only from these addresses (the connection's peer, never X-Forwarded-For).
 * Empty: every request gets nginx's own id. The same peers name the caller's address in their
 * X-Forwarded-For (realip; docs/decisions/20261127-caller-address-behind-a-balancer.md).
 */
export const requestIdSchema = z.strictObject({
  trusted_proxies: z
    .array(proxyAddress)
    .max(64)
    .refine((list) => new Set(list).size === list.length, { message: 'lists an address twice' })
    .default([]),
});
