import { KEY_TABLE } from '../../common/contract.js';
import type { Logger } from '../log.js';
import type { KeyTableAnswer, KeyTableState } from '../nginx/key-table.js';
import type { FeedPosition } from './change-feed.js';
import { ClientMirror } from './client-mirror.js';

/**
 * `off`: nginx's configuration holds no key table; `unknown`: not known yet, or nginx could not
 * be reached or must be loaded again; `loading`: a full load is under way; `complete`: nginx's
 * replica is whole and followed.
 */
export type ReplicaPhase = 'off' | 'unknown' | 'loading' | 'complete';

/** What the replicator reports, for metrics and readiness. */
export interface ReplicaStatus {
  phase: ReplicaPhase;
  position: FeedPosition | null;
  /** nginx's last answer about its replica. */
  nginx: KeyTableState | null;
  /** Seconds the last full load took (sidecar side, reads and pushes), or null. */
  loadSeconds: number | null;
  /** Positions the feed was ahead of nginx's replica at the last heartbeat. */
  lagPositions: number;
  /** Clients whose change no notice brought, found by a heartbeat's check and applied then. */
  missedChanges: number;
  /** Clients with a subject whose rows this sidecar holds (its mirror of clients). */
  subjects: number;
}

/**
 * What the replicator knows of nginx's replica, shared by its load (load.ts), its pushes
 * (pushes.ts) and its following of the feed (follow.ts); one instance per replicator, changed
 * only by the operation its queue runs (and by a notice's doubt, which is told at once).
 */
export class ReplicaState {
  phase: ReplicaPhase = 'unknown';
  position: FeedPosition | null = null;
  nginxState: KeyTableState | null = null;
  loadSeconds: number | null = null;
  lagPositions = 0;
  /**
   * Doubts told so far, and the last one each id was in: a push whose rows were read before an
   * id's doubt leaves that id to the push the doubt's notice queued, never writing the row it
   * read over the doubt.
   */
  doubts = 0;
  readonly doubtedAt = new Map<number, number>();
  missedChanges = 0;
  beatsChecked = 0;
  /** nginx was away or empty during the last operation: try again soon, not at the heartbeat. */
  retryWanted = false;
  readonly mirror = new ClientMirror();
  /**
   * A change was notified that could not be applied (its rows not read): its ids are in doubt
   * in nginx (DOUBT_RECORD), the position stays where it is and no heartbeat renews the trust
   * until a catch-up from the position has read them (docs/decisions/20261201-no-change-skipped.md).
   */
  unapplied = false;
  /** Changes notified and not yet applied: while any is, an id nginx does not hold is asked. */
  pending = 0;
  /** When the last heartbeat that came back was sent (performance.now()), or null. */
  beatSentAt: number | null = null;

  constructor(private readonly log: Logger) {}

  status(): ReplicaStatus {
    return {
      phase: this.phase,
      position: this.position,
      nginx: this.nginxState,
      loadSeconds: this.loadSeconds,
      lagPositions: this.lagPositions,
      missedChanges: this.missedChanges,
      subjects: this.mirror.size,
    };
  }

  /** Seconds an absent id may still be nobody's after the last heartbeat that came back. */
  liveLeft(): number {
    if (this.beatSentAt === null) return 0;
    return Math.max(0, KEY_TABLE.liveSeconds - (performance.now() - this.beatSentAt) / 1000);
  }

  /**
   * nginx's answer: true when it took the request. Anything else says what to do next: no
   * replica configured (off), nginx restarted or away (loaded again at the next heartbeat).
   */
  handle(answer: KeyTableAnswer, what: string): boolean {
    switch (answer.kind) {
      case 'state': {
        const wasFull = this.nginxState?.full ?? false;
        this.nginxState = answer.state;
        if (answer.state.full && !wasFull) {
          this.log.error(
            'the key table is full: nginx asks about the clients it could not hold; raise key_table.size',
            {
              records: answer.state.records,
            },
          );
        }
        return true;
      }
      case 'absent':
        if (this.phase !== 'off')
          this.log.info('nginx holds no key table (key_table.enabled is false)');
        this.phase = 'off';
        this.nginxState = null;
        return false;
      case 'empty':
        this.retryWanted = true;
        this.log.warn('nginx lost its key table (restarted); loading it again');
        this.phase = 'unknown';
        this.position = null;
        return false;
      case 'unreachable':
        this.retryWanted = true;
        if (this.phase !== 'unknown') {
          this.log.warn('cannot reach nginx for its key table; trying again', {
            what,
            error: answer.why,
          });
        }
        this.phase = this.phase === 'off' ? 'off' : 'unknown';
        if (this.phase === 'unknown') this.position = null;
        return false;
    }
  }
}
