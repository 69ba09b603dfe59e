import { Worker } from 'node:worker_threads';
import type { Logger } from '../../log.js';
import type { Sort } from '../store/order.js';
import type { PageRequest, RecordBatch } from '../store/reads.js';
import type { FromListWorker, ListAnswer, ToListWorker } from './messages.js';
import type { ListWorkerData } from './worker.js';

/** A batch of a whole listing; from the listing thread its text comes as UTF-8 bytes. */
export type ListedBatch = Omit<RecordBatch, 'json'> & { json: string | Uint8Array };

/** Whatever streams a whole listing: the store itself, or the listing thread. */
export interface RecordStreams {
  streamRecords(
    sort: Sort,
    from: PageRequest['from'],
    batch: number,
    namePrefix: string | null,
  ): AsyncGenerator<ListedBatch, void, undefined>;
}

/**
 * Whole listings read on a worker thread of their own, at a lower priority, with their own
 * connections (docs/decisions/20261127-listing-thread.md). The main thread only writes the
 * bytes it is handed. Started with the sidecar (`start`); a thread that dies fails its listings
 * (as a database fault would) and the next listing starts another.
 */
export class ListThread implements RecordStreams {
  private worker: Worker | null = null;
  private nextId = 1;
  /** Each open listing's waiting `next()`, by id. */
  private readonly waiting = new Map<number, (message: ListAnswer) => void>();

  constructor(
    private readonly databaseUrl: string,
    private readonly log: Logger,
  ) {}

  async *streamRecords(
    sort: Sort,
    from: PageRequest['from'],
    batch: number,
    namePrefix: string | null,
  ): AsyncGenerator<ListedBatch, void, undefined> {
    const id = this.nextId++;
    const worker = this.started();
    let finished = false;
    try {
      let message = await this.ask(worker, { op: 'open', id, sort, from, batch, namePrefix });
      for (;;) {
        if ('error' in message) {
          finished = true;
          throw Object.assign(new Error(message.error.message), { code: message.error.code });
        }
        if ('done' in message) {
          finished = true;
          return;
        }
        yield message.batch;
        message = await this.ask(worker, { op: 'next', id });
      }
    } finally {
      // Stopped early (the caller went away): the thread drops the listing and its read-ahead.
      if (!finished && this.worker === worker) worker.postMessage({ op: 'close', id });
      this.waiting.delete(id);
    }
  }

  /**
   * Starts the thread now rather than at the first listing: its fixed cost (an isolate and the
   * pg driver, about 20 MB) is paid at start-up, and the first listing does not wait for it.
   */
  start(): void {
    this.started();
  }

  /** Stops the thread; listings still open fail. */
  async close(): Promise<void> {
    const worker = this.worker;
    this.worker = null;
    if (worker) await worker.terminate();
  }

  private ask(worker: Worker, message: ToListWorker): Promise<ListAnswer> {
    // A thread that has died or been stopped would never answer.
    if (this.worker !== worker) {
      return Promise.resolve({
        id: message.id,
        error: { message: 'listing thread stopped', code: undefined },
      });
    }
    return new Promise((resolve) => {
      this.waiting.set(message.id, resolve);
      worker.postMessage(message);
    });
  }

  private started(): Worker {
    if (this.worker) return this.worker;
    const data: ListWorkerData = {
      databaseUrl: this.databaseUrl,
      niceness: LISTING_NICENESS,
    };
    const worker = new Worker(workerUrl(), { workerData: data, resourceLimits: LISTING_HEAP });
    // A thread with no listing open keeps no process alive.
    worker.unref();
    worker.on('message', (message: FromListWorker) => {
      if ('log' in message) {
        this.log[message.log.level](message.log.message, message.log.fields);
        return;
      }
      const resolve = this.waiting.get(message.id);
      this.waiting.delete(message.id);
      resolve?.(message);
    });
    const fail = (reason: string) => {
      if (this.worker === worker) this.worker = null;
      for (const [id, resolve] of this.waiting) {
        resolve({ id, error: { message: `listing thread ${reason}`, code: undefined } });
      }
      this.waiting.clear();
    };
    worker.on('error', (err) => {
      this.log.error('listing thread failed', { error: err.message });
      fail('failed');
    });
    worker.on('exit', (code) => fail(`exited (${code})`));
    this.worker = worker;
    return worker;
  }
}

/**
 * Added to the listing thread's nice value. A listing is bulk work a person waits seconds for;
 * `/auth` is a request waiting in nginx. At +10 the scheduler gives the main thread about ten
 * times the listing's share of a core they both want.
 */
export const LISTING_NICENESS = 10;

/**
 * The listing thread's heap. A listing's garbage is a batch at a time, so a small young
 * generation only means more frequent scavenges, on this thread and nobody else's: with V8's
 * default (16 MB semi-spaces) the sidecar's RSS grew by about 50 MB during a list of 10^5, with
 * 2 MB by about 20. The old generation holds only the driver; past 64 MB something is wrong, and
 * the thread dies (its listing is cut, the next starts another) instead of the sidecar growing.
 */
const LISTING_HEAP = { maxYoungGenerationSizeMb: 2, maxOldGenerationSizeMb: 64 };

/**
 * The compiled worker beside this file. Run from the TypeScript sources (the tests), the
 * compiled one in dist/: worker threads load JavaScript only, and the tests' global setup
 * keeps dist/ fresh.
 */
function workerUrl(): URL {
  const here = import.meta.url;
  return here.endsWith('.ts')
    ? new URL('../../../dist/sidecar/clients/listing/worker.js', here)
    : new URL('./worker.js', here);
}
