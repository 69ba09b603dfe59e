import { type HttpResponse, http } from './http.js';
import type { Stack } from './stack.js';

/** One answer as a replayed client receives it, with its raw Set-Cookie lines. */
export interface Answer extends HttpResponse {
  setCookies: string[];
  // biome-ignore lint/suspicious/noExplicitAny: a replay reads the JSON the way the client does.
  body: any;
}

/**
 * Sends exactly the requests a real client sends (method, path, headers, body bytes) to a
 * running gateway over HTTPS, so a conformance test can replay that client's sequence.
 */
export function replayer(stack: Stack) {
  return async (
    method: string,
    path: string,
    headers: Record<string, string>,
    body?: string,
  ): Promise<Answer> => {
    const res = await http(`${stack.baseUrl}${path}`, {
      method,
      headers:
        body === undefined
          ? headers
          : { ...headers, 'Content-Length': String(Buffer.byteLength(body)) },
      ...(body === undefined ? {} : { body }),
      tls: { ...(await stack.tls()) },
      connectTo: '127.0.0.1',
    });
    const raw = res.headers['set-cookie'];
    return { ...res, setCookies: raw === undefined ? [] : [raw].flat(), body: res.json };
  };
}

/**
 * A cookie jar as LWP's HTTP::Cookies, Go's cookiejar and RestSharp's CookieContainer keep
 * one: the latest value of each cookie, dropped when the server expires it.
 */
export class Jar {
  private readonly cookies = new Map<string, string>();

  take(setCookies: readonly string[]): void {
    for (const line of setCookies) {
      const [pair = '', ...attributes] = line.split(';');
      const eq = pair.indexOf('=');
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      if (attributes.some((a) => /^\s*max-age\s*=\s*0\s*$/i.test(a)) || value === '') {
        this.cookies.delete(name);
      } else this.cookies.set(name, value);
    }
  }

  /** The Cookie header the jar sends, or nothing. */
  header(): Record<string, string> {
    if (this.cookies.size === 0) return {};
    return { Cookie: [...this.cookies].map(([n, v]) => `${n}=${v}`).join('; ') };
  }
}
