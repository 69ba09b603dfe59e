import { readFile } from 'node:fs/promises';
import type { IncomingHttpHeaders } from 'node:http';
import { SIDECAR_PROOF } from '../../common/contract.js';
import { parseProofFile } from '../../common/sidecar-proof.js';
import type { Clock } from '../clock.js';
import type { Logger } from '../log.js';
import type { ProofGate, ProofVerdict } from './proof-gate.js';
import { sameProof } from './same-proof.js';

const HEADER = SIDECAR_PROOF.header.toLowerCase();

/** A refused request reads the file again at most this often: a flood costs one read a second. */
export const REREAD_MS = 1_000;

/**
 * The proof gate over the secret file the generator makes beside default.conf
 * (GATEWAY_PROOF_FILE). An absent or malformed file leaves the sidecar with no secret: every
 * request is refused (fail closed) until the file holds one, which a refusal notices within a
 * second, as it notices a rotated secret.
 */
export class FileProofGate implements ProofGate {
  private secret: Buffer | null = null;
  private readAt = Number.NEGATIVE_INFINITY;
  private reading: Promise<void> | null = null;
  /** The missing secret was logged: once per outage, not once per refused request. */
  private reported = false;

  private constructor(
    readonly file: string,
    private readonly log: Logger,
    private readonly clock: Clock,
  ) {}

  /** Reads the file once; a missing or malformed one is logged, not thrown (see above). */
  static async open(file: string, log: Logger, clock: Clock = Date.now): Promise<FileProofGate> {
    const gate = new FileProofGate(file, log, clock);
    await gate.read();
    return gate;
  }

  check(headers: IncomingHttpHeaders): ProofVerdict {
    if (this.secret === null) return { ok: false, reason: 'no_secret' };
    const presented = headers[HEADER];
    if (presented === undefined) return { ok: false, reason: 'missing' };
    // Sent twice: Node joins the values with ", " (never a secret's shape), frames keep the first.
    if (typeof presented !== 'string') return { ok: false, reason: 'malformed' };
    const verdict = sameProof(presented, this.secret);
    return verdict === 'same' ? { ok: true } : { ok: false, reason: verdict };
  }

  async recheck(headers: IncomingHttpHeaders): Promise<ProofVerdict> {
    if (this.clock() - this.readAt >= REREAD_MS) {
      this.reading ??= this.read().finally(() => {
        this.reading = null;
      });
    }
    if (this.reading) await this.reading;
    return this.check(headers);
  }

  private async read(): Promise<void> {
    this.readAt = this.clock();
    let parsed: ReturnType<typeof parseProofFile>;
    try {
      parsed = parseProofFile(await readFile(this.file, 'utf8'));
    } catch (err) {
      parsed = { ok: false, reason: (err as Error).message };
    }
    if (!parsed.ok) {
      if (!this.reported) {
        this.log.error('no proof secret: every request to the sidecar will be refused', {
          file: this.file,
          reason: parsed.reason,
        });
      }
      this.reported = true;
      this.secret = null;
      return;
    }
    if (this.secret !== null && !this.secret.equals(parsed.secret)) {
      this.log.info('the proof secret changed; nginx must show the new one', { file: this.file });
    }
    this.reported = false;
    this.secret = parsed.secret;
  }
}
