/**
 * The cookies of one engine, by name: always the latest value the engine set. Attributes such as
 * Path, Domain and Secure are not applied: a client talks to one configured origin only.
 */
export class CookieJar {
  private readonly cookies = new Map<string, string>();

  /** Takes in the Set-Cookie headers of a response; a cookie with Max-Age=0 or an empty value is dropped. */
  store(setCookie: readonly string[] | undefined): void {
    for (const line of setCookie ?? []) {
      const [pair = '', ...attributes] = line.split(';');
      const eq = pair.indexOf('=');
      if (eq <= 0) continue;
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      const expired = attributes.some((a) => /^\s*max-age\s*=\s*(0|-\d+)\s*$/i.test(a));
      if (expired || value === '') this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }

  /** The Cookie header to send, or undefined when the jar is empty. */
  header(): string | undefined {
    if (this.cookies.size === 0) return undefined;
    return [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  }

  clear(): void {
    this.cookies.clear();
  }
}
