import { mkdtemp, rm, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeEach, describe, expect, test } from 'vitest';
import { newProofFileText } from '../../../common/sidecar-proof.js';
import { FileProofGate, REREAD_MS } from '../../../sidecar/proof/file-proof-gate.js';
import { recordingLogger } from '../support/serve.js';

const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

let file: string;
let now: number;
const clock = () => now;
beforeEach(async () => {
  const dir = await mkdtemp(join(tmpdir(), 'gw-proof-gate-'));
  dirs.push(dir);
  file = join(dir, 'sidecar-proof.key');
  now = 1_000_000;
});

/** Writes a new secret and returns it as nginx sends it. */
async function newSecret(): Promise<string> {
  const text = newProofFileText();
  await writeFile(file, text);
  return text.trim();
}

const shown = (secret: string) => ({ 'x-gateway-proof': secret });

describe('FileProofGate', () => {
  test('proves the request that shows the file’s secret, and no other', async () => {
    const secret = await newSecret();
    const gate = await FileProofGate.open(file, recordingLogger().log, clock);
    expect(gate.check(shown(secret))).toEqual({ ok: true });
    expect(gate.check({})).toEqual({ ok: false, reason: 'missing' });
    expect(gate.check(shown('nginx'))).toEqual({ ok: false, reason: 'malformed' });
    expect(gate.check({ 'x-gateway-proof': [secret, secret] })).toEqual({
      ok: false,
      reason: 'malformed',
    });
    expect(gate.check(shown('0'.repeat(64)))).toEqual({ ok: false, reason: 'wrong' });
  });

  test('without a file it proves nobody, says so once, and takes the file once it is there', async () => {
    const { log, lines } = recordingLogger();
    const gate = await FileProofGate.open(file, log, clock);
    expect(gate.check(shown('a'.repeat(64)))).toEqual({ ok: false, reason: 'no_secret' });
    now += REREAD_MS;
    expect(await gate.recheck(shown('a'.repeat(64)))).toEqual({ ok: false, reason: 'no_secret' });
    expect(lines.filter((l) => l.level === 'error')).toHaveLength(1);
    expect(lines[0]?.fields).toMatchObject({ file });
    const secret = await newSecret();
    // Within the second after the last read: not read again.
    expect(await gate.recheck(shown(secret))).toEqual({ ok: false, reason: 'no_secret' });
    now += REREAD_MS;
    expect(await gate.recheck(shown(secret))).toEqual({ ok: true });
    expect(gate.check(shown(secret))).toEqual({ ok: true });
  });

  test('a malformed file proves nobody, even a request showing its text', async () => {
    await writeFile(file, 'not-a-secret\n');
    const { log, lines } = recordingLogger();
    const gate = await FileProofGate.open(file, log, clock);
    expect(gate.check(shown('not-a-secret'))).toEqual({ ok: false, reason: 'no_secret' });
    expect(lines[0]).toMatchObject({ level: 'error', fields: { file } });
  });

  test('a rotated secret is taken on the first refusal after a second; the old one is then wrong', async () => {
    const old = await newSecret();
    const { log, lines } = recordingLogger();
    const gate = await FileProofGate.open(file, log, clock);
    const rotated = await newSecret();
    expect(gate.check(shown(rotated))).toEqual({ ok: false, reason: 'wrong' });
    now += REREAD_MS;
    expect(await gate.recheck(shown(rotated))).toEqual({ ok: true });
    expect(gate.check(shown(old))).toEqual({ ok: false, reason: 'wrong' });
    expect(lines.some((l) => l.message.includes('changed'))).toBe(true);
  });

  test('a file removed while serving: every request refused from the next read on', async () => {
    const secret = await newSecret();
    const gate = await FileProofGate.open(file, recordingLogger().log, clock);
    await unlink(file);
    expect(gate.check(shown(secret))).toEqual({ ok: true });
    now += REREAD_MS;
    await gate.recheck(shown('b'.repeat(64)));
    expect(gate.check(shown(secret))).toEqual({ ok: false, reason: 'no_secret' });
  });

  test('a flood of refusals reads the file at most once a second', async () => {
    const secret = await newSecret();
    const gate = await FileProofGate.open(file, recordingLogger().log, clock);
    await unlink(file);
    now += REREAD_MS - 1;
    // Still within the second: no read, so the secret held is still there.
    for (let i = 0; i < 100; i += 1) await gate.recheck(shown('c'.repeat(64)));
    expect(gate.check(shown(secret))).toEqual({ ok: true });
  });
});
