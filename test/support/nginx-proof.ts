import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SIDECAR_PROOF } from '../../common/contract.js';
import { newProofFileText } from '../../common/sidecar-proof.js';

/** A proof secret of a test's own, for a sidecar process the test asks as nginx would. */
export interface TestProof {
  /** The secret's file: the sidecar's GATEWAY_PROOF_FILE. */
  file: string;
  /** The secret, as nginx sends it. */
  secret: string;
  /** `{ 'X-Gateway-Proof': secret }`, to spread into a request's headers. */
  header: Record<string, string>;
  /** `{ GATEWAY_PROOF_FILE: file }`, to spread into the sidecar's environment. */
  env: Record<string, string>;
}

/** Writes a new proof file in a folder of its own (0600) and returns how to use it. */
export async function testProof(): Promise<TestProof> {
  const dir = await mkdtemp(join(tmpdir(), 'gw-proof-'));
  const file = join(dir, 'sidecar-proof.key');
  const text = newProofFileText();
  await writeFile(file, text, { mode: 0o600 });
  const secret = text.trim();
  return {
    file,
    secret,
    header: { [SIDECAR_PROOF.header]: secret },
    env: { GATEWAY_PROOF_FILE: file },
  };
}
