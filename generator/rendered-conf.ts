import { NGINX_NAMES } from '../common/contract.js';

/**
 * Reads back what the proxy needs from a server file of `conf.d/` (default.conf as rendered,
 * or as an operator edited it). The generator writes that format, so it alone reads it:
 * runners, the container entrypoint, the bench and the tests ask `prepareProxy` instead.
 */
export interface ServerConfFacts {
  /** The port of the first `listen ... ssl`; null when the file has none. */
  httpsPort: number | null;
  /** Every `listen` port, in order, without repeats. */
  listenPorts: number[];
  /** Unix sockets nginx listens on (`listen unix:/path`): the control endpoint. */
  unixSockets: string[];
  /** The first `server` of each `upstream` block, by the block's name (`gateway_sidecar`...). */
  upstreams: Record<string, string>;
  /** The value of `set $gateway_sidecar "...";` (the Lua code's one-hop address); null: none. */
  sidecarVariable: string | null;
}

/** The directive text without its comment; nginx comments run from `#` to the end of the line. */
function code(line: string): string {
  return line.replace(/#.*$/, '');
}

export function readServerConf(text: string): ServerConfFacts {
  let httpsPort: number | null = null;
  const listenPorts: number[] = [];
  const unixSockets: string[] = [];
  const upstreams: Record<string, string> = {};
  let sidecarVariable: string | null = null;
  let upstream: string | null = null;
  for (const line of text.split('\n').map(code)) {
    const opened = /^\s*upstream\s+(\S+)\s*\{/.exec(line);
    if (opened) upstream = opened[1]!;
    const server = /^\s*server\s+([^\s;]+)/.exec(line);
    if (upstream && server && upstreams[upstream] === undefined) upstreams[upstream] = server[1]!;
    if (upstream && /}/.test(line)) upstream = null;
    const sidecar = new RegExp(`^\\s*set\\s+\\${NGINX_NAMES.sidecarVariable}\\s+"([^"]*)"`).exec(
      line,
    );
    if (sidecar && sidecarVariable === null) sidecarVariable = sidecar[1]!;
    const unix = /^\s*listen\s+(?:"unix:([^"]+)"|'unix:([^']+)'|unix:([^\s;]+))/.exec(line);
    if (unix) unixSockets.push((unix[1] ?? unix[2] ?? unix[3])!);
    const listen = /^\s*listen\s+(?:\S+:)?(\d+)\b([^;]*);/.exec(line);
    if (listen) {
      const port = Number(listen[1]);
      if (!listenPorts.includes(port)) listenPorts.push(port);
      if (httpsPort === null && /\bssl\b/.test(listen[2]!)) httpsPort = port;
    }
  }
  return { httpsPort, listenPorts, unixSockets, upstreams, sidecarVariable };
}
