import { timingSafeEqual } from 'node:crypto';
import { PROOF_BYTES, PROOF_SHAPE } from '../../common/sidecar-proof.js';

/**
 * Whether `presented` (a header's value) is `secret`, compared in constant time: the shape is
 * checked first (a fixed, public length), then the 32 bytes each side are compared whole, so
 * the time taken says nothing of how many leading digits were right.
 */
export function sameProof(presented: string, secret: Buffer): 'same' | 'malformed' | 'wrong' {
  if (!PROOF_SHAPE.test(presented)) return 'malformed';
  const given = Buffer.from(presented, 'hex');
  if (given.length !== PROOF_BYTES || secret.length !== PROOF_BYTES) return 'malformed';
  return timingSafeEqual(given, secret) ? 'same' : 'wrong';
}
