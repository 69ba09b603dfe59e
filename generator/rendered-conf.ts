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
  /** Directories of `*_cache_path` directives: nginx keeps answers there (credential-keyed). */
  cachePaths: string[];
}

/** The directive text without its comment; nginx comments run from `#` to the end of the line. */
function code(line: string): string {
  return line.replace(/#.*$/, '');
}

function unquoted(word: string): string {
  return word.replace(/^(["'])(.*)\1$/, '$2');
}

export function readServerConf(text: string): ServerConfFacts {
  let httpsPort: number | null = null;
  const listenPorts: number[] = [];
  const cachePaths: string[] = [];
  for (const line of text.split('\n').map(code)) {
    const listen = /^\s*listen\s+(?:\S+:)?(\d+)\b([^;]*);/.exec(line);
    if (listen) {
      const port = Number(listen[1]);
      if (!listenPorts.includes(port)) listenPorts.push(port);
      if (httpsPort === null && /\bssl\b/.test(listen[2]!)) httpsPort = port;
    }
    const cache = /^\s*\w+_cache_path\s+("[^"]*"|'[^']*'|[^\s;]+)/.exec(line);
    if (cache) cachePaths.push(unquoted(cache[1]!));
  }
  return { httpsPort, listenPorts, cachePaths };
}
