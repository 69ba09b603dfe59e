import { randomBytes } from 'node:crypto';

/**
 * The proof secret's file format, shared by the generator (which writes it) and the sidecar
 * (which reads it): 32 random bytes as 64 lowercase hex digits, then an optional line feed.
 * lua/gateway/proof.lua reads the same shape in nginx's master.
 */
export const PROOF_BYTES = 32;
export const PROOF_SHAPE = /^[0-9a-f]{64}$/;

/** A new secret, as the file holds it. */
export function newProofFileText(): string {
  return `${randomBytes(PROOF_BYTES).toString('hex')}\n`;
}

export type ParsedProof = { ok: true; secret: Buffer } | { ok: false; reason: string };

/** The secret in a proof file's text, or why the text is not one (nothing else is accepted). */
export function parseProofFile(text: string): ParsedProof {
  const value = text.endsWith('\n') ? text.slice(0, -1) : text;
  if (!PROOF_SHAPE.test(value)) {
    return {
      ok: false,
      reason: `must hold ${PROOF_BYTES * 2} lowercase hex digits (${PROOF_BYTES} random bytes) and nothing else`,
    };
  }
  return { ok: true, secret: Buffer.from(value, 'hex') };
}
