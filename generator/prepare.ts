import { existsSync } from 'node:fs';
import { chown, mkdir, readdir, readFile, rm, stat } from 'node:fs/promises';
import { connect } from 'node:net';
import { dirname, join } from 'node:path';
import type { CertificateRenewal } from './certificate-renewal.js';
import { checkConfigDir } from './check.js';
import { ensureConfigDir } from './config-dir.js';
import { formatProblems, GeneratorError } from './errors.js';
import { LAYOUT } from './layout.js';
import { type MainConfOptions, nginxArgs, writeMainConf } from './main-conf.js';
import type { NativePlaces } from './native-home.js';
import { readServerConf } from './rendered-conf.js';
import type { Settings } from './settings-schema.js';

export interface PrepareOptions {
  /** The configuration directory: completed (never overwritten), then checked. */
  configDir: string;
  settings: Settings;
  /** Where the main nginx.conf, the pid and temporary files go. */
  runtimeDir: string;
  errorLog?: MainConfOptions['errorLog'];
  accessLog?: MainConfOptions['accessLog'];
  /** Worker user when the master runs as root. */
  user?: string;
  /** nginx for `nginx -t`; default: nginx on the PATH; null: skip. */
  nginx?: string | null;
  /** The HTTPS port the operator asked for (GATEWAY_HTTPS_PORT): a file that says otherwise is an error. */
  expectedHttpsPort?: number;
  /** The native run's sockets and app: a default.conf that names others is an error. */
  native?: NativePlaces;
  /**
   * As root: the group a newly made proof secret is given to (GATEWAY_PROOF_GID), so a sidecar
   * running as that group in another container can read it.
   */
  proofGid?: number;
}

/** What starting the proxy needs, read from the files as they are (hand edits included). */
export interface PreparedProxy {
  configDir: string;
  runtimeDir: string;
  /** The main nginx.conf written for this start. */
  mainConf: string;
  /** Arguments for nginx: `nginx ...nginxArgs` starts it, `... -s reload` reloads it. */
  nginxArgs: string[];
  httpsPort: number;
  fqdn: string;
  url: string;
  /** nginx's control socket (the first `listen unix:`), where the sidecar pushes revocations. */
  controlSocket: string | null;
  /** Files of the configuration directory this start created, and the ones it kept. */
  written: string[];
  kept: string[];
  /** The generated certificate, replaced at this start because it was near its end. */
  renewed: CertificateRenewal[];
  /** What was not checked, and why. */
  notes: string[];
}

/** The configuration directory cannot be used as it is; `problems` names each file. */
export class PrepareError extends GeneratorError {
  constructor(
    readonly configDir: string,
    readonly problems: string[],
  ) {
    super(
      'INVALID_CONFIG',
      formatProblems(`The configuration in ${configDir} is not valid`, problems),
    );
  }
}

/**
 * The one start-up step of the proxy, natively and in the container: complete the
 * configuration directory, read back what the proxy needs (HTTPS port, control socket), write
 * the main nginx.conf into the runtime directory, and check the whole with `nginx -t`.
 */
export async function prepareProxy(options: PrepareOptions): Promise<PreparedProxy> {
  const { configDir, settings, runtimeDir } = options;
  const absent = layoutEntries().filter((relative) => !existsSync(join(configDir, relative)));
  const ensured = await ensureConfigDir(configDir, settings);
  await giveToDirOwner(configDir, absent);
  if (options.proofGid !== undefined && absent.includes(LAYOUT.sidecarProof)) {
    await shareProof(join(configDir, LAYOUT.sidecarProof), options.proofGid);
  }

  const defaultConf = await readFile(join(configDir, LAYOUT.defaultConf), 'utf8');
  const { httpsPort } = readServerConf(defaultConf);
  const problems: string[] = [];
  if (httpsPort === null) {
    problems.push(`${join(configDir, LAYOUT.defaultConf)}: no "listen ... ssl" line`);
  } else if (options.expectedHttpsPort !== undefined && options.expectedHttpsPort !== httpsPort) {
    problems.push(
      `GATEWAY_HTTPS_PORT is ${options.expectedHttpsPort} but ${join(configDir, LAYOUT.defaultConf)} listens on ${httpsPort}: ` +
        'the file rules once written; edit it (or delete it to render it again)',
    );
  }
  const unixSockets: string[] = [];
  for (const text of await serverFiles(configDir))
    unixSockets.push(...readServerConf(text).unixSockets);
  // nginx binds its unix sockets (nginx -t too) but does not create their folders, and a
  // socket file left by an nginx that was killed would make the bind fail.
  for (const socket of unixSockets) {
    await mkdir(dirname(socket), { recursive: true, mode: 0o755 });
    await removeStaleSocket(socket);
  }

  const mainConf = await writeMainConf({
    runtimeDir,
    configDir: settings.config_dir,
    errorLog: options.errorLog,
    accessLog: options.accessLog,
    user: options.user,
  });
  const check = await checkConfigDir(configDir, settings, {
    nginx: options.nginx,
    native: options.native ?? null,
  });
  problems.push(...check.problems);
  if (problems.length > 0 || httpsPort === null) throw new PrepareError(configDir, problems);

  return {
    configDir,
    runtimeDir,
    mainConf,
    nginxArgs: nginxArgs(runtimeDir),
    httpsPort,
    fqdn: settings.fqdn,
    url: `https://${settings.fqdn}:${httpsPort}/`,
    controlSocket: unixSockets[0] ?? null,
    written: ensured.written,
    kept: ensured.kept,
    renewed: ensured.renewed,
    notes: check.notes,
  };
}

/** The layout's files and the directories that hold them, parents first. */
function layoutEntries(): string[] {
  const files = Object.values(LAYOUT).filter((relative) => relative !== LAYOUT.confGlob);
  const dirs = new Set<string>();
  for (const file of files) {
    for (let d = dirname(file); d !== '.'; d = dirname(d)) dirs.add(d);
  }
  return [...[...dirs].sort(), ...files];
}

/**
 * Files created in a directory that someone else owns (an operator's mounted folder, say uid
 * 1000) become theirs, so that they can edit them; what was there keeps its owner. Only root
 * can give files away; as anyone else the files are the caller's already.
 */
async function giveToDirOwner(configDir: string, created: string[]): Promise<void> {
  if (process.geteuid?.() !== 0) return;
  const owner = await stat(configDir);
  if (owner.uid === 0 && owner.gid === 0) return;
  for (const relative of created) {
    const path = join(configDir, relative);
    if (existsSync(path)) await chown(path, owner.uid, owner.gid);
  }
}

/** Gives a new proof file to `gid` (as root only: nobody else can), keeping its owner. */
async function shareProof(path: string, gid: number): Promise<void> {
  if (process.geteuid?.() !== 0) return;
  const { uid } = await stat(path);
  await chown(path, uid, gid);
}

async function serverFiles(configDir: string): Promise<string[]> {
  const dir = join(configDir, dirname(LAYOUT.confGlob));
  const names = (await readdir(dir)).filter((name) => name.endsWith('.conf')).sort();
  return await Promise.all(names.map((name) => readFile(join(dir, name), 'utf8')));
}

/**
 * Removes a unix socket file nobody listens on (left by an nginx that was killed): nginx
 * refuses to bind over it. A socket someone answers on is left alone.
 */
export async function removeStaleSocket(path: string): Promise<void> {
  if (!existsSync(path)) return;
  const listening = await new Promise<boolean>((resolve) => {
    const socket = connect({ path }, () => {
      socket.destroy();
      resolve(true);
    });
    socket.on('error', () => resolve(false));
  });
  if (!listening) await rm(path, { force: true });
}
