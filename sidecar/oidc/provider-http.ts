import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { rootCertificates } from 'node:tls';
import type { OidcResource } from '../metrics/sidecar-metrics.js';
import { ProviderError } from './errors.js';

/** Discovery documents and key sets are small; a bigger answer is a fault, not data. */
const MAX_BODY_BYTES = 512 * 1024;

const TLS_TRUST_CODES = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'CERT_UNTRUSTED',
  'CERT_REJECTED',
  'CERT_SIGNATURE_FAILURE',
  'ERR_TLS_CERT_ALTNAME_INVALID',
]);

/**
 * GETs JSON from a provider with node:http(s), because Node 20's global fetch cannot be given
 * a CA. `sslVerify` on: Node's roots plus OIDC_CA_FILE; off: any certificate. No redirects,
 * no cookies, a hard time-out for the whole exchange and a size cap.
 */
export class ProviderHttp {
  private readonly ca: string[];

  constructor(
    extraCa: string[],
    private readonly timeoutMs: number,
    /** Told of every fetch and whether it gave a usable answer (the metrics count them). */
    private readonly observe: (resource: OidcResource, ok: boolean) => void = () => {},
  ) {
    // `ca` replaces Node's default roots, so keep them: public providers must still verify.
    this.ca = [...rootCertificates, ...extraCa];
  }

  /** The parsed JSON body of a 200 answer; anything else is a ProviderError naming `what`. */
  async getJson(
    url: URL,
    sslVerify: boolean,
    what: string,
    resource: OidcResource,
  ): Promise<unknown> {
    try {
      const body = await this.fetchJson(url, sslVerify, what);
      this.observe(resource, true);
      return body;
    } catch (err) {
      this.observe(resource, false);
      throw err;
    }
  }

  private fetchJson(url: URL, sslVerify: boolean, what: string): Promise<unknown> {
    const https = url.protocol === 'https:';
    const send = https ? httpsRequest : httpRequest;
    return new Promise((resolve, reject) => {
      const fail = (reason: string, cause?: unknown) =>
        reject(new ProviderError(`${what} failed: ${reason}`, { cause }));
      const req = send(
        url,
        {
          method: 'GET',
          headers: { Accept: 'application/json' },
          agent: false,
          ...(https ? { ca: this.ca, rejectUnauthorized: sslVerify } : {}),
        },
        (res) => readBody(res, what).then(resolve, reject),
      );
      const timer = setTimeout(() => {
        req.destroy();
        fail('identity provider timed out');
      }, this.timeoutMs);
      req.on('close', () => clearTimeout(timer));
      req.on('error', (err: NodeJS.ErrnoException) => {
        clearTimeout(timer);
        fail(describeNetworkError(err), err);
      });
      req.end();
    });
  }
}

function readBody(res: IncomingMessage, what: string): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const fail = (reason: string) => {
      res.destroy();
      reject(new ProviderError(`${what} failed: ${reason}`));
    };
    if (res.statusCode !== 200) {
      fail(`identity provider answered HTTP ${res.statusCode}`);
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    res.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) fail('identity provider answer too large');
      else chunks.push(chunk);
    });
    res.on('error', () => fail('connection to the identity provider broke'));
    res.on('end', () => {
      try {
        resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')));
      } catch {
        fail('identity provider answer is not JSON');
      }
    });
  });
}

function describeNetworkError(err: NodeJS.ErrnoException): string {
  if (err.code && TLS_TRUST_CODES.has(err.code)) {
    return 'identity provider TLS certificate not trusted';
  }
  if (err.code?.startsWith('ERR_SSL') || err.code?.startsWith('ERR_TLS')) {
    return 'TLS handshake with the identity provider failed';
  }
  return 'identity provider unreachable';
}
