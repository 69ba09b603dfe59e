import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { RENEW_WITHIN_DAYS } from './certificate-renewal.js';
import { checkConfigDir } from './check.js';
import { type ConfigDirResult, ensureConfigDir, renderConfigDir } from './config-dir.js';
import { GeneratorError } from './errors.js';
import { LAYOUT } from './layout.js';
import { nginxArgs, writeMainConf } from './main-conf.js';
import { nativeDefaults, nativeOverrides, readNativeHome } from './native-home.js';
import { prepareProxy } from './prepare.js';
import { describeChanges, renderChanges } from './render-changes.js';
import { readServerConf } from './rendered-conf.js';
import { loadSettings, SETTINGS_ENV, SETTINGS_FILE_ENV } from './settings.js';

export const USAGE = `Usage: gateway-config <command> <dir> [options]

Commands:
  render <dir>          Render the settings into <dir>: writes nginx/conf.d/default.conf and
                        nginx/ssl/ssl.conf; creates nginx/ssl/nginx.crt and nginx.key and the
                        sidecar's proof secret (nginx/conf.d/sidecar-proof.key) if missing.
                        Refuses to replace a present file that would change (an edit would be
                        lost) and lists the lines it would drop and add; --force replaces them
                        and lists the same. In a native home (.gateway/config) the native run's
                        sidecar, app and control socket are kept.
  ensure <dir>          Complete <dir>: write only missing files, create the certificate if
                        missing; never overwrite a file, except the generated certificate
                        when fewer than ${RENEW_WITHIN_DAYS} days remain (renewed). Run on every start.
  check <dir>           Validate the settings, the certificate (key, FQDN, expiry), in a native
                        home that default.conf names the native run's sidecar, app and control
                        socket, and, when nginx is on the PATH, the whole directory with nginx -t.
  main-conf <dir>       Write the main <dir>/nginx.conf for runtime directory <dir> (pid and
                        temporary files), including <config_dir>/nginx/conf.d/*.conf.
  prepare <dir>         What the proxy runs on every start: ensure <dir>, read back its HTTPS
                        port and control socket, write the main nginx.conf into --runtime-dir,
                        check. Prints JSON (mainConf, nginxArgs, httpsPort, url, controlSocket,
                        written, notes...) on stdout; progress and notes on stderr.

Options:
  --settings <file>     Settings YAML (default: $${SETTINGS_FILE_ENV}; neither: built-in defaults)
  --nginx <path>        nginx for check (default: nginx on the PATH)
  --error-log <where>   main-conf, prepare: stderr or a file (default <runtime dir>/error.log)
  --access-log <where>  main-conf, prepare: off, stdout or a file (default <runtime dir>/access.log)
  --user <name>         main-conf, prepare: worker user when nginx starts as root
  --runtime-dir <dir>   prepare: where the main nginx.conf, pid and temporary files go
  --nginx-args          prepare: print nginx's arguments one per line instead of JSON
  --force               render: replace present files even when that drops lines
  -h, --help            Show this help

Environment (overrides the settings file; empty means unset):
${Object.entries(SETTINGS_ENV)
  .map(([name, path]) => `  ${name.padEnd(28)}${path.join('.')}`)
  .join('\n')}

GATEWAY_PROOF_GID (prepare, as root): the group given the sidecar's proof secret
(nginx/conf.d/sidecar-proof.key) when prepare creates it, so a sidecar of that group can read it.

config_dir (where nginx sees the directory) defaults to <dir> itself for render, ensure
and check; set it in the settings when rendering for another place (e.g. /etc/config).
Exit status: 0 success, 1 invalid settings, certificate or configuration, 2 usage error.`;

/** Where the CLI reads its environment and writes its output; tests pass their own. */
export interface CliIo {
  env: Readonly<Record<string, string | undefined>>;
  cwd: string;
  out(line: string): void;
  err(line: string): void;
}

function summary(dir: string, result: ConfigDirResult): string {
  const part = (label: string, files: string[]) =>
    files.length ? `${label} ${files.join(', ')}` : '';
  return [`${dir}:`, part('wrote', result.written), part('kept', result.kept)]
    .filter(Boolean)
    .join(' ');
}

/** One line per renewed certificate: the proxy's log and the native run's output say it. */
export function renewalLines(result: Pick<ConfigDirResult, 'renewed'>): string[] {
  return result.renewed.map(
    (r) =>
      `renewed ${r.file}: the generated certificate ends ${r.previousNotAfter} (fewer than ${RENEW_WITHIN_DAYS} days left); the new one is valid until ${r.notAfter}`,
  );
}

/** Runs `gateway-config` with `argv` (without node and the script); resolves to the exit status. */
export async function runCli(argv: string[], io: CliIo): Promise<number> {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(argv);
  } catch (err) {
    io.err(`gateway-config: ${(err as Error).message}\n\n${USAGE}`);
    return 2;
  }
  const { values, positionals } = parsed;
  if (values.help) {
    io.out(USAGE);
    return 0;
  }
  const [command, target, ...extra] = positionals;
  if (command === undefined || target === undefined || extra.length > 0) {
    io.err(`gateway-config: expected a command and one directory\n\n${USAGE}`);
    return 2;
  }
  const dir = resolve(io.cwd, target);
  const file = values.settings === undefined ? undefined : resolve(io.cwd, values.settings);
  try {
    switch (command) {
      case 'render':
      case 'ensure': {
        const native = await readNativeHome(dir);
        const settings = await loadSettings({
          file,
          env: io.env,
          defaults: native ? nativeDefaults(native) : { config_dir: dir },
          ...(native ? { overrides: nativeOverrides(native) } : {}),
        });
        if (native)
          io.out(
            `note: ${dir} is a native home's configuration: its sidecar, app and control socket stay the native run's (${native.sidecar}, ${native.app}, ${native.controlSocket})`,
          );
        if (command === 'render') {
          const changes = await renderChanges(dir, settings);
          if (changes.length > 0 && !values.force) {
            io.err(
              `gateway-config: render would replace ${changes.length} file(s) that differ from this rendering; nothing was written. Lines it would drop (-) and add (+):`,
            );
            for (const line of describeChanges(dir, changes)) io.err(line);
            io.err(
              'Carry your edits into the settings (--settings), or run again with --force to replace the files anyway.',
            );
            return 1;
          }
          if (changes.length > 0) {
            io.out(
              `replacing ${changes.length} file(s) (--force); lines dropped (-) and added (+):`,
            );
            for (const line of describeChanges(dir, changes)) io.out(line);
          }
        }
        const write = command === 'render' ? renderConfigDir : ensureConfigDir;
        const result = await write(dir, settings);
        io.out(summary(dir, result));
        for (const line of renewalLines(result)) io.out(line);
        return 0;
      }
      case 'check': {
        const native = await readNativeHome(dir);
        const settings = await loadSettings({
          file,
          env: io.env,
          defaults: native ? nativeDefaults(native) : { config_dir: dir },
          ...(native ? { overrides: nativeOverrides(native) } : {}),
        });
        const nginx = values.nginx === undefined ? undefined : resolve(io.cwd, values.nginx);
        const report = await checkConfigDir(dir, settings, { nginx, native });
        if (!native) report.notes.push(...(await placesNote(dir)));
        for (const note of report.notes) io.out(`note: ${note}`);
        if (report.problems.length === 0) {
          io.out(`${dir}: OK${report.nginxTested ? ' (nginx -t passed)' : ''}`);
          return 0;
        }
        io.err(`${dir}: ${report.problems.length} problem(s)`);
        for (const problem of report.problems) io.err(`  - ${problem.replaceAll('\n', '\n    ')}`);
        return 1;
      }
      case 'main-conf': {
        const settings = await loadSettings({ file, env: io.env });
        const path = await writeMainConf({
          runtimeDir: dir,
          configDir: settings.config_dir,
          errorLog: values['error-log'],
          accessLog: values['access-log'],
          user: values.user,
        });
        io.out(`wrote ${path}`);
        io.out(`start nginx with: nginx ${nginxArgs(dir).join(' ')}`);
        return 0;
      }
      case 'prepare': {
        if (values['runtime-dir'] === undefined) {
          io.err(`gateway-config: prepare needs --runtime-dir <dir>\n\n${USAGE}`);
          return 2;
        }
        const settings = await loadSettings({ file, env: io.env, defaults: { config_dir: dir } });
        const expected = io.env.GATEWAY_HTTPS_PORT ? Number(io.env.GATEWAY_HTTPS_PORT) : undefined;
        const proofGid = readProofGid(io.env.GATEWAY_PROOF_GID);
        const prepared = await prepareProxy({
          configDir: dir,
          settings,
          runtimeDir: resolve(io.cwd, values['runtime-dir']),
          errorLog: values['error-log'],
          accessLog: values['access-log'],
          user: values.user,
          nginx: values.nginx === undefined ? undefined : resolve(io.cwd, values.nginx),
          expectedHttpsPort: expected,
          ...(proofGid === undefined ? {} : { proofGid }),
        });
        io.err(summary(dir, prepared));
        for (const line of renewalLines(prepared)) io.err(line);
        for (const note of prepared.notes) io.err(`note: ${note}`);
        if (values['nginx-args']) io.out(prepared.nginxArgs.join('\n'));
        else io.out(JSON.stringify(prepared, null, 2));
        return 0;
      }
      default:
        io.err(`gateway-config: unknown command "${command}"\n\n${USAGE}`);
        return 2;
    }
  } catch (err) {
    if (err instanceof GeneratorError) {
      io.err(err.message);
      return 1;
    }
    io.err(`gateway-config: ${(err as Error).message}`);
    return 1;
  }
}

/** GATEWAY_PROOF_GID: a numeric group id, or unset (empty) for none. */
function readProofGid(value: string | undefined): number | undefined {
  if (value === undefined || value === '') return undefined;
  if (!/^[0-9]{1,10}$/.test(value)) {
    throw new GeneratorError(
      'INVALID_SETTINGS',
      `GATEWAY_PROOF_GID must be a numeric group id, got ${JSON.stringify(value)}`,
    );
  }
  return Number(value);
}

/**
 * Outside a native home, where the sidecar and the control socket are is known only where
 * nginx will run (a container, a pod): say what was not verified, and what verifies it live.
 */
async function placesNote(dir: string): Promise<string[]> {
  const text = await readFile(join(dir, LAYOUT.defaultConf), 'utf8').catch(() => null);
  if (text === null) return [];
  const facts = readServerConf(text);
  return [
    `not verified here: the sidecar at ${facts.upstreams.gateway_sidecar ?? '(none)'} and the control socket ${facts.unixSockets[0] ?? '(none)'} must be reachable where nginx runs; there, the sidecar's /readyz is 503 SIDECAR_UNREACHABLE_FROM_NGINX while they are not`,
  ];
}

function parse(argv: string[]) {
  return parseArgs({
    args: argv,
    allowPositionals: true,
    strict: true,
    options: {
      settings: { type: 'string' },
      nginx: { type: 'string' },
      'error-log': { type: 'string' },
      'access-log': { type: 'string' },
      user: { type: 'string' },
      'runtime-dir': { type: 'string' },
      'nginx-args': { type: 'boolean' },
      force: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
}
