import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { newProofFileText, parseProofFile } from '../common/sidecar-proof.js';
import { GeneratorError } from './errors.js';
import { createFile, readIfPresent } from './file-writes.js';
import { LAYOUT } from './layout.js';

/**
 * Owner and group may read it: nginx's master (the owner, or root) and, where the sidecar runs
 * as another user, the group they share (Kubernetes' fsGroup, or GATEWAY_PROOF_GID).
 */
export const PROOF_FILE_MODE = 0o640;

/** The proof file is present but holds no secret: nothing starts until an operator decides. */
export class ProofFileError extends GeneratorError {
  constructor(
    readonly file: string,
    reason: string,
  ) {
    super(
      'INVALID_PROOF_FILE',
      `${file}: ${reason}; delete it to have a new secret made (then restart nginx and the sidecar)`,
    );
  }
}

/** Throws ProofFileError unless `text` (the file at `path`) holds a secret. */
function mustHoldSecret(path: string, text: string): void {
  const parsed = parseProofFile(text);
  if (!parsed.ok) throw new ProofFileError(path, parsed.reason);
}

/** Checks a present proof file before anything is written; 'absent' when there is none. */
export async function verifyPresentProof(dir: string): Promise<'absent' | 'valid'> {
  const path = join(dir, LAYOUT.sidecarProof);
  const text = await readIfPresent(path);
  if (text === undefined) return 'absent';
  mustHoldSecret(path, text);
  return 'valid';
}

/**
 * Creates the proof file unless it exists, and never rewrites it: the secret nginx and the
 * sidecar share must not change under either of them. Returns whether it was created. A file
 * made by someone else at the same moment is kept when it holds a secret.
 */
export async function ensureProofFile(dir: string): Promise<boolean> {
  const path = join(dir, LAYOUT.sidecarProof);
  if (await createFile(path, newProofFileText(), PROOF_FILE_MODE)) return true;
  mustHoldSecret(path, await readFile(path, 'utf8'));
  return false;
}
