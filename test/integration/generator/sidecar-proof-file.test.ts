import { mkdtemp, readdir, readFile, rm, stat, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import {
  checkConfigDir,
  ensureConfigDir,
  LAYOUT,
  PROOF_FILE_MODE,
  ProofFileError,
  parseSettings,
  renderConfigDir,
  type Settings,
} from '../../../generator/index.js';

// nginx's proof for the sidecar (docs/decisions/20261202-sidecar-trusts-only-nginx.md): made
// once, beside default.conf, and never rewritten by ensure or render.

const homes: string[] = [];
afterAll(async () => {
  for (const home of homes) await rm(home, { recursive: true, force: true });
});

async function freshDir(): Promise<string> {
  const home = await mkdtemp(join(tmpdir(), 'gw-proof-'));
  homes.push(home);
  return join(home, 'config');
}

const settingsFor = (dir: string): Settings => parseSettings({ config_dir: dir });
const proofOf = (dir: string) => readFile(join(dir, LAYOUT.sidecarProof), 'utf8');

describe('the sidecar proof file', () => {
  test('the first ensure makes it beside default.conf: 32 random bytes in hex, owner and group only', async () => {
    const dir = await freshDir();
    const result = await ensureConfigDir(dir, settingsFor(dir));
    expect(result.written).toContain(LAYOUT.sidecarProof);
    expect(LAYOUT.sidecarProof).toBe('nginx/conf.d/sidecar-proof.key');
    expect(await proofOf(dir)).toMatch(/^[0-9a-f]{64}\n$/);
    expect((await stat(join(dir, LAYOUT.sidecarProof))).mode & 0o777).toBe(PROOF_FILE_MODE);
    expect(PROOF_FILE_MODE & 0o007).toBe(0);
  });

  test('two installs get two secrets', async () => {
    const [a, b] = [await freshDir(), await freshDir()];
    await ensureConfigDir(a, settingsFor(a));
    await ensureConfigDir(b, settingsFor(b));
    expect(await proofOf(a)).not.toBe(await proofOf(b));
  });

  test('kept byte for byte by a second ensure and by render, which replaces default.conf', async () => {
    const dir = await freshDir();
    await ensureConfigDir(dir, settingsFor(dir));
    const secret = await proofOf(dir);
    const again = await ensureConfigDir(dir, settingsFor(dir));
    expect(again.kept).toContain(LAYOUT.sidecarProof);
    const rendered = await renderConfigDir(dir, settingsFor(dir));
    expect(rendered.written).toContain(LAYOUT.defaultConf);
    expect(rendered.written).not.toContain(LAYOUT.sidecarProof);
    expect(rendered.kept).toContain(LAYOUT.sidecarProof);
    expect(await proofOf(dir)).toBe(secret);
  });

  test("an operator's own secret (no line feed) is kept as it is", async () => {
    const dir = await freshDir();
    await ensureConfigDir(dir, settingsFor(dir));
    const own = 'ab'.repeat(32);
    await writeFile(join(dir, LAYOUT.sidecarProof), own);
    await ensureConfigDir(dir, settingsFor(dir));
    expect(await proofOf(dir)).toBe(own);
  });

  test('a deleted file is made again, with a new secret (a rotation)', async () => {
    const dir = await freshDir();
    await ensureConfigDir(dir, settingsFor(dir));
    const first = await proofOf(dir);
    await unlink(join(dir, LAYOUT.sidecarProof));
    const result = await ensureConfigDir(dir, settingsFor(dir));
    expect(result.written).toEqual([LAYOUT.sidecarProof]);
    expect(await proofOf(dir)).not.toBe(first);
  });

  test.each([
    ['empty', ''],
    ['too short', 'ab'.repeat(31)],
    ['upper case', 'AB'.repeat(32)],
    ['base64', 'q'.repeat(43)],
    ['two lines', `${'ab'.repeat(32)}\n${'cd'.repeat(32)}\n`],
    ['spaces', ` ${'ab'.repeat(32)}`],
  ])('a malformed file (%s) is refused, naming it, and nothing is written', async (_, text) => {
    const dir = await freshDir();
    await ensureConfigDir(dir, settingsFor(dir));
    await writeFile(join(dir, LAYOUT.sidecarProof), text);
    await unlink(join(dir, LAYOUT.sslConf));
    for (const run of [ensureConfigDir, renderConfigDir]) {
      const error = await run(dir, settingsFor(dir)).catch((err: unknown) => err);
      expect(error).toBeInstanceOf(ProofFileError);
      expect((error as ProofFileError).code).toBe('INVALID_PROOF_FILE');
      expect((error as Error).message).toContain(join(dir, LAYOUT.sidecarProof));
      expect((error as Error).message).toContain('delete it');
    }
    expect(await proofOf(dir)).toBe(text);
    const names = await readdir(join(dir, 'nginx', 'ssl'));
    expect(names).not.toContain('ssl.conf');
    const report = await checkConfigDir(dir, settingsFor(dir), { nginx: null });
    expect(report.problems.join('\n')).toContain(`${join(dir, LAYOUT.sidecarProof)}: must hold`);
  });

  test('check names a missing proof file', async () => {
    const dir = await freshDir();
    await ensureConfigDir(dir, settingsFor(dir));
    await unlink(join(dir, LAYOUT.sidecarProof));
    const report = await checkConfigDir(dir, settingsFor(dir), { nginx: null });
    expect(report.problems).toEqual([
      `${join(dir, LAYOUT.sidecarProof)}: missing or unreadable (gateway-config ensure creates it)`,
    ]);
  });
});
