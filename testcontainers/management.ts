import { request } from 'node:https';

/** An API client made through the management API, with its key (`Authorization: apk <key>`). */
export interface GatewayClient {
  id: number;
  name: string;
  isAdmin: boolean;
  key: string;
}

export interface CreateClientOptions {
  /** Default: a unique `test-client-<n>`. */
  name?: string;
  isAdmin?: boolean;
}

export interface JsonAnswer {
  status: number;
  body: unknown;
}

/**
 * One management call over HTTPS, trusting only the gateway's own certificate (no
 * `rejectUnauthorized: false` anywhere).
 */
export function managementCall(
  baseUrl: string,
  ca: string,
  adminKey: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<JsonAnswer> {
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = request(
      new URL(path, baseUrl),
      {
        method,
        ca,
        headers: {
          Authorization: `apk ${adminKey}`,
          Accept: 'application/json',
          ...(payload === undefined
            ? {}
            : { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(payload) }),
        },
        timeout: 30_000,
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          text += chunk;
        });
        res.on('end', () => {
          let parsed: unknown = text;
          try {
            parsed = text === '' ? null : JSON.parse(text);
          } catch {
            // Not JSON: the text itself goes into the error.
          }
          resolve({ status: res.statusCode ?? 0, body: parsed });
        });
      },
    );
    req.on('timeout', () => req.destroy(new Error(`${method} ${path}: no answer in 30 s`)));
    req.on('error', reject);
    req.end(payload);
  });
}

/** Throws with the gateway's own error body unless the answer has the expected status. */
export function expectStatus(answer: JsonAnswer, expected: number, what: string): void {
  if (answer.status !== expected) {
    throw new Error(
      `GatewayContainer: ${what} answered ${answer.status}, expected ${expected}: ${JSON.stringify(answer.body)}`,
    );
  }
}
