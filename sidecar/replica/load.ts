import type { Logger } from '../log.js';
import type { NginxKeyTable } from '../nginx/key-table.js';
import { BACKGROUND_SPANS, inBackgroundSpan } from '../tracing/tracer.js';
import {
  type ChangeFeed,
  type FeedPosition,
  formatPosition,
  parsePosition,
} from './change-feed.js';
import { KEYS_MAX, SUBJECTS_MAX } from './client-mirror.js';
import { change, type ReplicaPushes } from './pushes.js';
import type { ReplicaState } from './replica-state.js';

/**
 * How nginx's replica comes to be whole: a full load (a start, an nginx restart, a gap in the
 * feed), or the adoption of the replica nginx already holds (this sidecar restarted, nginx did
 * not); and the sidecar's mirror of the clients filled beside it.
 */
export class ReplicaLoader {
  constructor(
    private readonly state: ReplicaState,
    private readonly feed: ChangeFeed,
    private readonly nginx: NginxKeyTable,
    private readonly pushes: ReplicaPushes,
    private readonly log: Logger,
    private readonly batchSize: number,
  ) {}

  /** Loads every client into nginx's replica, then what changed meanwhile, and completes it. */
  load(): Promise<void> {
    return inBackgroundSpan(BACKGROUND_SPANS.keyTableLoad, () => this.loadAll());
  }

  private async loadAll(): Promise<void> {
    const s = this.state;
    const started = performance.now();
    // Everything is read again: nothing is in doubt once it completes, and nothing is trusted
    // before. (Changes notified during the load are queued, not doubted: no doubt to keep.)
    s.unapplied = false;
    s.doubtedAt.clear();
    s.mirror.clear();
    const since = s.mirror.reading();
    const head = await this.feed.head();
    const at = formatPosition(head);
    if (!s.handle(await this.nginx.load(at), 'load')) return;
    s.phase = 'loading';
    let records = 0;
    for await (const rows of this.feed.all(this.batchSize)) {
      s.mirror.put(rows, since);
      if (!s.handle(await this.nginx.apply(rows.map(change), at), 'load')) return;
      records += rows.length;
    }
    const changed = await this.feed.changedSince(head.position);
    if (!changed) {
      s.phase = 'unknown';
      return;
    }
    const pushed = await this.pushes.push(changed.rows, changed.head, true);
    if (!pushed) return;
    s.mirror.filled = true;
    this.mirrorHeld();
    s.loadSeconds = (performance.now() - started) / 1000;
    this.log.info('key table loaded into nginx', {
      records,
      seconds: Number(s.loadSeconds.toFixed(3)),
      full: s.nginxState?.full ?? false,
    });
  }

  /** The replica nginx already holds (this sidecar restarted, nginx did not), if it can be followed. */
  async adoptNginxPosition(head: FeedPosition): Promise<FeedPosition | null> {
    const answer = await this.nginx.state();
    this.state.handle(answer, 'read');
    if (answer.kind !== 'state') return null;
    const position = parsePosition(answer.state.position);
    if (answer.state.phase !== 'complete' || !position || position.epoch !== head.epoch)
      return null;
    this.state.phase = 'complete';
    return position;
  }

  /**
   * Reads every client into the mirror when it holds less than all of them (a sidecar
   * restarted beside a running nginx adopts its replica: nothing was loaded here).
   */
  async fillMirror(): Promise<void> {
    const { mirror } = this.state;
    if (this.state.phase !== 'complete' || mirror.filled) return;
    const since = mirror.reading();
    for await (const rows of this.feed.all(this.batchSize)) mirror.put(rows, since);
    mirror.filled = true;
    this.mirrorHeld();
  }

  /** Says once per load or fill that the mirror could not hold every client. */
  private mirrorHeld(): void {
    const { mirror } = this.state;
    if (!mirror.overflowed) return;
    this.log.warn(
      'the sidecar holds the rows of the first clients only; the others are looked up in PostgreSQL',
      { held: mirror.held, subjects: mirror.size, max: SUBJECTS_MAX, maxKeys: KEYS_MAX },
    );
  }
}
