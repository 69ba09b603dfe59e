import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { parseProofFile } from '../common/sidecar-proof.js';
import { certificateProblems } from './certificate-check.js';
import { LAYOUT } from './layout.js';
import { moduleDirectiveProblems } from './module-placement.js';
import { type NativePlaces, nativeConfProblems } from './native-home.js';
import { findNginx, testNginxConfig } from './nginx-binary.js';
import type { Settings } from './settings-schema.js';

export interface CheckOptions {
  /** nginx executable for `nginx -t`; default: nginx on the PATH; null: skip the test. */
  nginx?: string | null;
  /** The clock for certificate validity (tests freeze it). */
  now?: Date;
  /** The native run this directory is for, when it is a native home's: where it will run. */
  native?: NativePlaces | null;
}

export interface CheckReport {
  /** Everything wrong, each naming its file; empty when the directory is usable. */
  problems: string[];
  /** What was not checked, and why. */
  notes: string[];
  nginxTested: boolean;
}

async function readOrNull(path: string): Promise<string | null> {
  try {
    return await readFile(path, 'utf8');
  } catch {
    return null;
  }
}

/**
 * Checks a configuration directory as nginx will use it: all files present, certificate
 * against key, FQDN and expiry, then `nginx -t` with the gateway's main nginx.conf. The
 * files are checked as they are, hand edits included; nothing is compared with a rendering.
 */
export async function checkConfigDir(
  dir: string,
  settings: Settings,
  options: CheckOptions = {},
): Promise<CheckReport> {
  const report: CheckReport = { problems: [], notes: [], nginxTested: false };
  const contents = new Map<string, string>();
  for (const relative of Object.values(LAYOUT)) {
    if (relative === LAYOUT.confGlob) continue;
    const path = join(dir, relative);
    const text = await readOrNull(path);
    if (text === null)
      report.problems.push(`${path}: missing or unreadable (gateway-config ensure creates it)`);
    else contents.set(relative, text);
  }
  const defaultConf = contents.get(LAYOUT.defaultConf);
  if (defaultConf !== undefined)
    report.problems.push(...moduleDirectiveProblems(defaultConf, join(dir, LAYOUT.defaultConf)));
  if (options.native && defaultConf !== undefined)
    report.problems.push(...nativeConfProblems(defaultConf, options.native));
  const proof = contents.get(LAYOUT.sidecarProof);
  const parsedProof = proof === undefined ? null : parseProofFile(proof);
  if (parsedProof && !parsedProof.ok) {
    report.problems.push(
      `${join(dir, LAYOUT.sidecarProof)}: ${parsedProof.reason}; delete it to have a new secret made`,
    );
  }
  const certificatePem = contents.get(LAYOUT.certificate);
  const keyPem = contents.get(LAYOUT.key);
  if (certificatePem !== undefined && keyPem !== undefined) {
    const files = {
      certificatePem,
      keyPem,
      certificateFile: join(dir, LAYOUT.certificate),
      keyFile: join(dir, LAYOUT.key),
    };
    report.problems.push(...certificateProblems(files, settings.fqdn, options.now ?? new Date()));
  }

  const nginx = options.nginx === undefined ? findNginx() : options.nginx;
  const absolute = resolve(dir);
  if (nginx === null) {
    report.notes.push('nginx -t skipped: no nginx on the PATH');
  } else if (report.problems.length > 0) {
    report.notes.push('nginx -t skipped: fix the problems above first');
  } else if (absolute !== settings.config_dir) {
    report.notes.push(
      `nginx -t skipped: the files refer to config_dir ${settings.config_dir}, not ${absolute}`,
    );
  } else {
    const result = await testNginxConfig(nginx, absolute);
    report.nginxTested = true;
    if (!result.ok) report.problems.push(`nginx -t failed:\n${result.output}`);
  }
  return report;
}
