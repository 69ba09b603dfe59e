import { isUtf8 } from 'node:buffer';
import { constants, type KeyObject, verify } from 'node:crypto';

/**
 * A JWT's signature, checked synchronously with node:crypto. jose's `jwtVerify` checks it with
 * WebCrypto, which Node runs on the libuv thread pool: two thread hand-offs and about 0.1 ms
 * more on every bearer token's first sight (docs/decisions/20261128-bearer-verification-in-process.md).
 * jose still parses and selects the provider's keys (key-set.ts); this file holds what
 * `jwtVerify` did with them, in its order and with its texts, for compact JWTs only.
 */

/** How each accepted algorithm verifies (RFC 7518 §3.3–3.5, RFC 8037), as jose's table. */
interface Scheme {
  /** The digest; none for EdDSA, which hashes inside. */
  readonly digest?: string;
  readonly padding?: number;
  /** RSA-PSS: exactly the digest's length (RFC 7518 §3.5); node's default would take any. */
  readonly saltLength?: number;
  /** ECDSA signatures in a JWS are r‖s (IEEE P1363), not DER. */
  readonly dsaEncoding?: 'ieee-p1363';
  /** RSA keys shorter than this are refused as a provider fault, as jose refuses them. */
  readonly minRsaBits: number;
}

const rsa = (bits: number): Scheme => ({
  digest: `sha${bits}`,
  padding: constants.RSA_PKCS1_PADDING,
  minRsaBits: 2048,
});
const pss = (bits: number): Scheme => ({
  digest: `sha${bits}`,
  padding: constants.RSA_PKCS1_PSS_PADDING,
  saltLength: bits / 8,
  minRsaBits: 2048,
});
const ecdsa = (bits: number): Scheme => ({
  digest: `sha${bits}`,
  dsaEncoding: 'ieee-p1363',
  minRsaBits: 0,
});
// Stryker disable next-line ObjectLiteral: equivalent (`undefined < undefined` is false too)
const eddsa: Scheme = { minRsaBits: 0 };

/** The asymmetric algorithms a bearer token may use (algorithms.ts refuses every other). */
export const SCHEMES: Readonly<Record<string, Scheme>> = {
  RS256: rsa(256),
  RS384: rsa(384),
  RS512: rsa(512),
  PS256: pss(256),
  PS384: pss(384),
  PS512: pss(512),
  ES256: ecdsa(256),
  ES384: ecdsa(384),
  ES512: ecdsa(512),
  EdDSA: eddsa,
  Ed25519: eddsa,
};

/** A JOSE header: the JSON object of a token's first part. */
export type JoseHeader = Record<string, unknown>;

export type Verified = { ok: true; payload: Buffer } | { ok: false; reason: string };

/** RFC 7515 §2: base64url without padding or whitespace (jose also lets those two through). */
const BASE64URL = /^[A-Za-z0-9_-]*$/;

/** A base64url part's bytes, or null when it is not one. */
export function base64url(part: string): Buffer | null {
  return BASE64URL.test(part) && part.length % 4 !== 1 ? Buffer.from(part, 'base64url') : null;
}

/** A part's bytes as a JSON object, or null (not UTF-8, not JSON, or not an object). */
export function jsonObject(bytes: Buffer): Record<string, unknown> | null {
  if (!isUtf8(bytes)) return null;
  try {
    const value: unknown = JSON.parse(bytes.toString());
    // JSON.parse makes plain objects only; this leaves out arrays, null and the scalars.
    return Object.prototype.toString.call(value) === '[object Object]'
      ? (value as Record<string, unknown>)
      : null;
  } catch {
    return null;
  }
}

/** The header of a compact JWS (three parts, as the caller checked), or null if unreadable. */
export function readHeader(token: string): JoseHeader | null {
  // A part that is not base64url reads as no bytes, which are not JSON.
  return jsonObject(base64url(token.slice(0, token.indexOf('.'))) ?? NOTHING);
}

const NOTHING = Buffer.alloc(0);

const malformed = (message: string): Verified => ({
  ok: false,
  reason: `malformed token (${message})`,
});

/**
 * RFC 7515 §4.1.11: every extension a token marks critical must be understood. jose
 * understands only `b64` (RFC 7797); its value must then be a boolean. Returns the refusal, or
 * whether the payload is base64url-encoded.
 */
function criticalExtensions(header: JoseHeader): { refusal: string } | { b64: boolean } {
  const { crit } = header;
  if (crit === undefined) return { b64: true };
  if (
    !Array.isArray(crit) ||
    crit.length === 0 ||
    crit.some((name) => typeof name !== 'string' || name === '')
  ) {
    return {
      refusal:
        'malformed token ("crit" (Critical) Header Parameter MUST be an array of non-empty strings when present)',
    };
  }
  for (const name of crit as string[]) {
    if (name !== 'b64') {
      return {
        refusal: `unsupported token (Extension Header Parameter "${name}" is not recognized)`,
      };
    }
    if (header.b64 === undefined) {
      return { refusal: `malformed token (Extension Header Parameter "${name}" is missing)` };
    }
  }
  if (typeof header.b64 !== 'boolean') {
    return {
      refusal:
        'malformed token (The "b64" (base64url-encode payload) Header Parameter must be a boolean)',
    };
  }
  return { b64: header.b64 };
}

/**
 * Checks a compact JWS's signature against the provider's candidate keys for its `alg` (more
 * than one only when the token names no `kid` and several keys fit; any one of them verifying
 * is enough). `alg` must be a key of SCHEMES. Throws only for a key the provider should never
 * have published (an RSA key under 2048 bits): a fault, logged, and the token refused.
 */
export function verifyJws(
  token: string,
  header: JoseHeader,
  alg: string,
  keys: readonly KeyObject[],
): Verified {
  const extensions = criticalExtensions(header);
  if ('refusal' in extensions) return { ok: false, reason: extensions.refusal };
  const scheme = SCHEMES[alg] as Scheme;
  const first = token.indexOf('.');
  const last = token.lastIndexOf('.');
  const payloadPart = token.slice(first + 1, last);
  // The signing input is bytes: a character beyond ASCII has no single one.
  if (/\P{ASCII}/u.test(payloadPart))
    return malformed('The payload is not a valid base64url string');
  const signature = base64url(token.slice(last + 1));
  if (signature === null) return malformed('Failed to base64url decode the signature');
  // All ASCII by now (the header was base64url, the payload checked above): UTF-8 is ASCII.
  const signed = Buffer.from(token.slice(0, last));
  if (!keys.some((key) => verifies(scheme, alg, key, signed, signature))) {
    return { ok: false, reason: 'signature verification failed' };
  }
  const payload = base64url(payloadPart);
  if (payload === null) return malformed('Failed to base64url decode the payload');
  if (!extensions.b64) return malformed('JWTs MUST NOT use unencoded payload');
  return { ok: true, payload };
}

function verifies(
  scheme: Scheme,
  alg: string,
  key: KeyObject,
  signed: Buffer,
  signature: Buffer,
): boolean {
  // Every key here is asymmetric: it has details. Only RSA ones have a modulus; for the others
  // `undefined < 0` is false.
  const bits = (key.asymmetricKeyDetails as { modulusLength: number }).modulusLength;
  if (bits < scheme.minRsaBits) {
    throw new TypeError(`${alg} requires key modulusLength to be 2048 bits or larger`);
  }
  // A signature of the wrong length or shape is false, not an exception (node's verify, for
  // every scheme here); anything it does throw is a fault the verifier logs, and refuses.
  return verify(
    scheme.digest,
    signed,
    {
      key,
      padding: scheme.padding,
      saltLength: scheme.saltLength,
      dsaEncoding: scheme.dsaEncoding,
    },
    signature,
  );
}
