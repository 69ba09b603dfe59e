import { readServerConf } from './rendered-conf.js';

/**
 * The bench's baseline server configuration (`npm run bench`): the gateway's own rendered `default.conf`, with
 * authentication switched off and nothing else changed. Derived from the file on disk (not
 * from the template), so whatever the gateway's nginx does today (TLS include, keep-alive
 * upstreams, proxy headers, buffers) the baseline does too, and the difference measured is the
 * cost of authentication alone.
 *
 * Changes, each the smallest that makes it a second, independent nginx without auth:
 * - every `auth_request <uri>;` becomes `auth_request off;` wherever it is (server level
 *   today). The `auth_request_set` lines stay: nginx's auth_request handler returns before
 *   evaluating them when auth is off, and removing them would leave `$client_id` & co.
 *   undefined. Their variables are empty, so the identity headers are not sent upstream.
 * - `listen` ports move to the baseline's own ports (same flags: ssl, http2...).
 * - paths nginx writes at run time inside the server file (`*_cache_path`, e.g. an auth
 *   answer cache) move into the baseline's directory, so two nginx never share one.
 * Everything else stays byte for byte: the `include` of the gateway's `ssl.conf` (same
 * certificate, protocols, ciphers, session cache), the upstream blocks (the same engine
 * socket; the sidecar upstream is never used), the locations.
 */
export interface BaselineConf {
  text: string;
  /** Lines changed, for the report ("auth_request /_auth; → auth_request off;"). */
  changes: string[];
}

export function deriveBaselineConf(
  gatewayConf: string,
  ports: Map<number, number>,
  runtimeDir: string,
): BaselineConf {
  const changes: string[] = [];
  const lines = gatewayConf.split('\n').map((line) => {
    const code = line.replace(/#.*$/, '');
    let out = line;
    const auth = /^(\s*)auth_request\s+(?!off\s*;)\S+\s*;/.exec(code);
    if (auth) out = `${auth[1]}auth_request off;`;
    const listen = /^(\s*listen\s+(?:\S+:)?)(\d+)\b(.*)$/.exec(line);
    if (listen) {
      const to = ports.get(Number(listen[2]));
      if (to === undefined) throw new Error(`no baseline port for "${line.trim()}"`);
      out = `${listen[1]}${to}${listen[3]}`;
    }
    const cachePath = /^(\s*\w+_cache_path\s+)("[^"]*"|\S+)(.*)$/.exec(code);
    if (cachePath) {
      const name = cachePath[2]!.replace(/^"|"$/g, '').replace(/\W+/g, '_');
      out = `${cachePath[1]}"${runtimeDir}/cache${name}"${cachePath[3]}`;
    }
    if (out !== line) changes.push(`${line.trim()}  →  ${out.trim()}`);
    return out;
  });
  if (!changes.some((c) => c.includes('auth_request off'))) {
    throw new Error('the gateway default.conf has no auth_request to switch off');
  }
  return { text: lines.join('\n'), changes };
}

/** Every port a `listen` directive names, in order. */
export function listenPorts(conf: string): number[] {
  return readServerConf(conf).listenPorts;
}
