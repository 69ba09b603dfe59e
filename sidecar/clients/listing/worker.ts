import { getPriority, setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import { createPool } from '../../db/pool.js';
import { type DebugFields, debugFields, type Logger } from '../../log.js';
import { ClientReads, type RecordBatch } from '../store/reads.js';
import type { FromListWorker, ListLogLine, ToListWorker } from './messages.js';

/**
 * The listing thread: whole listings are read and serialised here, in an isolate of its own,
 * so their tens of megabytes of text never make the main thread's collector stop `/auth`
 * (docs/decisions/20261127-listing-thread.md). Started by `ListThread`.
 */

export interface ListWorkerData {
  databaseUrl: string;
  /** Added to this thread's nice value: listings yield the sidecar's cores to `/auth`. */
  niceness: number;
}

/** The highest nice value Linux knows: the lowest priority. */
const LOWEST_PRIORITY = 19;

const port = parentPort;
if (!port) throw new Error('listing/worker.js runs only as a worker thread');
const data = workerData as ListWorkerData;

/** Lines go to the main thread's logger, which knows the level and where lines go. */
function threadLogger(bound: Record<string, unknown>): Logger {
  const at = (level: ListLogLine['log']['level']) => (message: string, fields?: DebugFields) =>
    post({ log: { level, message, fields: { ...bound, ...debugFields(fields) } } });
  return {
    debug: at('debug'),
    info: at('info'),
    warn: at('warn'),
    error: at('error'),
    child: (fields) => threadLogger({ ...bound, ...fields }),
  };
}
const log = threadLogger({ thread: 'listing' });

// On Linux a nice value belongs to a thread: this lowers the listing thread alone, from
// whatever the sidecar runs at (19 is the lowest). Refused (a sandbox without setpriority):
// listings then compete as equals, as they did on one thread.
try {
  setPriority(Math.min(LOWEST_PRIORITY, getPriority() + data.niceness));
} catch (err) {
  log.warn('listing thread priority not lowered', { error: (err as Error).message });
}

// Two connections: a listing holds one only while a batch is read (one at a time, one ahead),
// so two serve several listings at once; each sidecar adds at most two to PostgreSQL.
const reads = new ClientReads(createPool(data.databaseUrl, log, { max: 2 }));

interface Open {
  batches: AsyncGenerator<RecordBatch, void, undefined>;
  /** The batch read ahead: the database works on it while the main thread writes the last. */
  ahead: Promise<IteratorResult<RecordBatch, void>>;
}
const open = new Map<number, Open>();

const encoder = new TextEncoder();

/** The listing's next batch, started now and awaited when asked for. */
function readAhead(
  batches: AsyncGenerator<RecordBatch, void, undefined>,
): Promise<IteratorResult<RecordBatch, void>> {
  const ahead = batches.next();
  // Settled when asked for; until then a rejection is not "unhandled".
  ahead.catch(() => undefined);
  return ahead;
}

function post(message: FromListWorker, transfer: ArrayBuffer[] = []): void {
  port!.postMessage(message, transfer);
}

async function answer(id: number): Promise<void> {
  const listing = open.get(id);
  if (!listing) return;
  let next: IteratorResult<RecordBatch, void>;
  try {
    next = await listing.ahead;
  } catch (err) {
    open.delete(id);
    const { message, code } = err as { message?: unknown; code?: unknown };
    post({
      id,
      error: {
        message: typeof message === 'string' ? message : String(err),
        code: typeof code === 'string' ? code : undefined,
      },
    });
    return;
  }
  if (next.done) {
    open.delete(id);
    post({ id, done: true });
    return;
  }
  listing.ahead = readAhead(listing.batches);
  const { json, count, first, last } = next.value;
  const bytes = encoder.encode(json);
  post({ id, batch: { json: bytes, count, first, last } }, [bytes.buffer as ArrayBuffer]);
}

port.on('message', (message: ToListWorker) => {
  if (message.op === 'open') {
    const batches = reads.streamRecords(
      message.sort,
      message.from,
      message.batch,
      message.namePrefix,
    );
    open.set(message.id, { batches, ahead: readAhead(batches) });
    void answer(message.id);
  } else if (message.op === 'next') {
    void answer(message.id);
  } else {
    const listing = open.get(message.id);
    open.delete(message.id);
    // After the batch read ahead settles: a generator cannot return while it is running.
    void listing?.ahead.finally(() => listing.batches.return(undefined)).catch(() => undefined);
  }
});
