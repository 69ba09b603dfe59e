import { basename } from 'node:path';
import { NGINX_NAMES } from '../../common/contract.js';
import { readServerConf } from '../../generator/index.js';

/**
 * Second nginx instances derived from a gateway's own rendered `default.conf`, read from disk
 * (not from the template), so whatever the gateway's nginx does today (TLS include, keep-alive
 * upstreams, proxy headers, shared dicts, error pages) the derived one does too, and the
 * difference measured is the one change named.
 *
 * Every derivation first makes the copy a second, independent nginx, with the smallest
 * changes that allow it:
 * - `listen` ports move to the copy's own ports (same flags: ssl, http2...);
 * - `listen "unix:<path>"` (the control server) moves to `<runtimeDir>/<same name>`: two nginx
 *   cannot bind one socket. Every other mention of that path (the `set` that tells the Lua
 *   code where to ask) follows, so the copy never talks to the gateway's nginx.
 * Everything else stays byte for byte: the `include` of the gateway's `ssl.conf` (same
 * certificate, protocols, ciphers, session cache), the upstream blocks (the same app and
 * sidecar sockets), the locations.
 */
export interface DerivedConf {
  text: string;
  /** Lines changed, for the report ("access_by_lua_block ...  →  (removed)"). */
  changes: string[];
}

/**
 * The baseline: authentication switched off and nothing else changed. The one-line
 * `access_by_lua_block` directives (server level, the management location's and the
 * console's) are removed; nothing else in the file runs Lua per request. The identity variables keep their
 * empty `set` values, so no identity header reaches the app. `init_by_lua_block` and the
 * shared dicts stay: they cost nothing per request and keep the two processes alike.
 */
export function deriveBaselineConf(
  gatewayConf: string,
  ports: Map<number, number>,
  runtimeDir: string,
): DerivedConf {
  if (/^\s*auth_request\s/m.test(gatewayConf)) {
    throw new Error('the gateway default.conf still uses auth_request: rebuild (npm run build)');
  }
  const moved = moveListeners(gatewayConf, ports, runtimeDir);
  const changes = [...moved.changes];
  const lines = moved.text.split('\n').filter((line) => {
    const code = line.replace(/#.*$/, '');
    if (!/\baccess_by_lua/.test(code)) return true;
    // Only the one-line block form is known to be complete on its line; anything else
    // (a multi-line block, access_by_lua_file) could not be removed whole.
    if (!/^\s*access_by_lua_block\s*\{[^{}]*\}\s*$/.test(code)) {
      throw new Error(`cannot switch off "${line.trim()}": not a one-line access_by_lua_block`);
    }
    changes.push(`${line.trim()}  →  (removed)`);
    return false;
  });
  if (!changes.some((c) => c.endsWith('(removed)'))) {
    throw new Error('the gateway default.conf has no access_by_lua_block to switch off');
  }
  return { text: lines.join('\n'), changes };
}

/**
 * The gateway with its decision cache off: every request asks the sidecar (the gateway's own,
 * through the upstream socket the copy shares). Only the `set` of the lifetime changes, to
 * the documented "0: every request asks the sidecar".
 */
export function deriveCacheOffConf(
  gatewayConf: string,
  ports: Map<number, number>,
  runtimeDir: string,
): DerivedConf {
  const moved = moveListeners(gatewayConf, ports, runtimeDir);
  const changes = [...moved.changes];
  const name = NGINX_NAMES.maxAgeVariable.replace('$', '\\$');
  const pattern = new RegExp(`^(\\s*set\\s+${name}\\s+)\\S+;`);
  const lines = moved.text.split('\n').map((line) => {
    const set = pattern.exec(line);
    if (!set) return line;
    const out = `${set[1]}0;`;
    changes.push(`${line.trim()}  →  ${out.trim()}`);
    return out;
  });
  if (!changes.some((c) => c.includes(NGINX_NAMES.maxAgeVariable))) {
    throw new Error(`the gateway default.conf has no "set ${NGINX_NAMES.maxAgeVariable}"`);
  }
  return { text: lines.join('\n'), changes };
}

/**
 * A copy for the rows that compare two renders of the gateway's own settings (tracing on and
 * off): with `rendered`, the same settings rendered again with one thing more, after checking
 * that their render without it (`same`) is the gateway's file byte for byte, so the copy
 * differs from the gateway by what the settings changed and nothing else; without, the
 * gateway's file as it is. Either way only the listeners move.
 */
export function deriveRendered(rendered?: { same: string; changed: string }) {
  return (gatewayConf: string, ports: Map<number, number>, runtimeDir: string): DerivedConf => {
    if (rendered && rendered.same !== gatewayConf) {
      throw new Error("the gateway's settings, rendered again, do not give its default.conf");
    }
    const moved = moveListeners(rendered?.changed ?? gatewayConf, ports, runtimeDir);
    if (!rendered) return moved;
    const before = new Set(gatewayConf.split('\n'));
    const added = rendered.changed.split('\n').filter((l) => l.trim() !== '' && !before.has(l));
    return { text: moved.text, changes: [...moved.changes, ...added.map((l) => `+ ${l.trim()}`)] };
  };
}

/** Every port a `listen` directive names, in order. */
export function listenPorts(conf: string): number[] {
  return readServerConf(conf).listenPorts;
}

/** Ports to the copy's, unix sockets into `runtimeDir` (see the module comment). */
function moveListeners(conf: string, ports: Map<number, number>, runtimeDir: string): DerivedConf {
  const changes: string[] = [];
  const sockets = new Map<string, string>();
  for (const from of readServerConf(conf).unixSockets) {
    const to = `${runtimeDir}/${basename(from)}`;
    if (to === from) throw new Error(`the copy's socket ${to} is the gateway's own`);
    sockets.set(from, to);
  }
  const lines = conf.split('\n').map((line) => {
    let out = line;
    const listen = /^(\s*listen\s+(?:\S+:)?)(\d+)\b(.*)$/.exec(line);
    if (listen) {
      const to = ports.get(Number(listen[2]));
      if (to === undefined) throw new Error(`no port for the copy of "${line.trim()}"`);
      out = `${listen[1]}${to}${listen[3]}`;
    }
    for (const [from, to] of sockets) out = out.replaceAll(from, to);
    if (out !== line) changes.push(`${line.trim()}  →  ${out.trim()}`);
    return out;
  });
  return { text: lines.join('\n'), changes };
}
