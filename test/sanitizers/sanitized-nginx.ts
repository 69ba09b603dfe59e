import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

// Debian's nginx with the gateway's module built with AddressSanitizer and
// UndefinedBehaviorSanitizer (gcc's, as nginx's own build uses gcc): the ASan runtime is
// preloaded into nginx (LD_PRELOAD works for a module dlopen()ed by a program built without
// it), through a wrapper named `nginx` first on PATH, which the native gateway finds as its
// nginx. Reports go to files in REPORTS, which the suite reads after each file
// (no-reports.ts). docs/decisions/20261125-hit-in-c.md, "Fuzzed and sanitized".

const ROOT = new URL('../..', import.meta.url).pathname;
const OUT = join(ROOT, 'build', 'sanitizers');
export const MODULE_DIR = join(ROOT, 'build', 'nginx-module-asan');
export const BIN_DIR = join(OUT, 'bin');
export const REPORTS = join(OUT, 'reports');

const SANITIZE = '-fsanitize=address,undefined';

/** Builds the sanitized module (a no-op when built) and writes the nginx wrapper. */
export function prepareSanitizedNginx(): void {
  execFileSync('bash', [join(ROOT, 'scripts', 'build-nginx-module.sh'), MODULE_DIR], {
    env: {
      ...process.env,
      MODULE_CC_OPT: `-O1 -g -fno-omit-frame-pointer ${SANITIZE} -fno-sanitize-recover=undefined`,
      MODULE_LD_OPT: SANITIZE,
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const asan = execFileSync('gcc', ['-print-file-name=libasan.so'], { encoding: 'utf8' }).trim();
  const nginx = ['/usr/sbin/nginx', '/usr/bin/nginx'].find((p) => {
    try {
      return readFileSync(p).length > 0;
    } catch {
      return false;
    }
  });
  if (!nginx) throw new Error("Debian's nginx is not installed");
  mkdirSync(BIN_DIR, { recursive: true });
  rmSync(REPORTS, { recursive: true, force: true });
  mkdirSync(REPORTS, { recursive: true });
  // The workers run as an unprivileged user when the tests run as root: they write here too.
  chmodSync(REPORTS, 0o1777);
  const options = [
    `log_path=${REPORTS}/asan`,
    // Leaks count; what nginx, LuaJIT and OpenSSL keep until exit does not (LSAN_OPTIONS).
    'detect_leaks=1',
    'print_suppressions=0',
    // LuaJIT's and nginx's signal handlers stay theirs.
    'allow_user_segv_handler=1',
    'handle_segv=1',
  ].join(':');
  writeFileSync(
    join(BIN_DIR, 'nginx'),
    [
      '#!/bin/sh',
      '# Written by test/sanitizers/sanitized-nginx.ts: Debian nginx with the ASan runtime.',
      `export LD_PRELOAD="${asan}"`,
      `export ASAN_OPTIONS="${options}"`,
      `export LSAN_OPTIONS="suppressions=${join(ROOT, 'test', 'sanitizers', 'lsan.supp')}:print_suppressions=0"`,
      `export UBSAN_OPTIONS="log_path=${REPORTS}/ubsan:print_stacktrace=1:halt_on_error=1"`,
      `exec ${nginx} "$@"`,
      '',
    ].join('\n'),
  );
  chmodSync(join(BIN_DIR, 'nginx'), 0o755);
}

/** The sanitizer reports written so far: file name and text. */
export function sanitizerReports(): { file: string; text: string }[] {
  let files: string[];
  try {
    files = readdirSync(REPORTS);
  } catch {
    return [];
  }
  return files.map((file) => ({ file, text: readFileSync(join(REPORTS, file), 'utf8') }));
}

/** Removes the reports read (the directory stays, writable by nginx's workers). */
export function clearSanitizerReports(): void {
  for (const { file } of sanitizerReports()) rmSync(join(REPORTS, file), { force: true });
}
