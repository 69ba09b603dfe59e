import { request } from 'node:http';
import { KEY_TABLE } from '../../common/contract.js';

/** What nginx says of its replica (GET, and the answer to every load and apply). */
export interface KeyTableState {
  /** `loading`, `complete`, or null: nothing held. */
  phase: 'loading' | 'complete' | null;
  /** `<epoch>:<position>` it reflects, or null. */
  position: string | null;
  records: number;
  full: boolean;
  trustedUntil: number | null;
  liveUntil: number | null;
  loadSeconds: number | null;
  capacityBytes: number | null;
  freeBytes: number | null;
}

/** One change for the replica: a client's record (bytes) or, with null, its deletion. */
export interface KeyTableChange {
  id: number;
  record: Buffer | null;
}

/** How an apply moves nginx's trust and liveness (NginxKeyTable.apply). */
export interface ApplyOptions {
  complete?: boolean;
  renew?: boolean;
  liveS?: number;
}

/** The answer of nginx: its state; `absent` (no replica in its configuration); `empty` (an
 * apply with no load under way or done: nginx restarted); `unreachable` (logged by the caller). */
export type KeyTableAnswer =
  | { kind: 'state'; state: KeyTableState }
  | { kind: 'absent' }
  | { kind: 'empty' }
  | { kind: 'unreachable'; why: string };

const TIMEOUT_MS = 10_000;
const MAX_ANSWER = 1024 * 1024;

/** Pure: nginx's JSON state (lua/gateway/key_table.lua's state()) as a KeyTableState. */
export function parseKeyTableState(json: unknown): KeyTableState | null {
  if (typeof json !== 'object' || json === null || Array.isArray(json)) return null;
  const o = json as Record<string, unknown>;
  const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : null);
  const phase = o.phase === 'loading' || o.phase === 'complete' ? o.phase : null;
  return {
    phase,
    position: typeof o.position === 'string' ? o.position : null,
    records: num(o.records) ?? 0,
    full: o.full === true,
    trustedUntil: num(o.trusted_until),
    liveUntil: num(o.live_until),
    loadSeconds: num(o.load_seconds),
    capacityBytes: num(o.capacity_bytes),
    freeBytes: num(o.free_bytes),
  };
}

/** Pure: the body of an apply, one line per change (lua/gateway/key_table.lua's parse_line). */
export function applyBody(changes: readonly KeyTableChange[]): string {
  let body = '';
  for (const { id, record } of changes) {
    body += record ? `${id} ${record.toString('base64')}\n` : `${id}\n`;
  }
  return body;
}

/** nginx's key table location on its control socket (never the public port). */
export class NginxKeyTable {
  constructor(private readonly socketPath: string) {}

  state(): Promise<KeyTableAnswer> {
    return this.call('GET', '', '');
  }

  /** Drops what nginx holds and starts a load that reflects `position`. */
  load(position: string): Promise<KeyTableAnswer> {
    return this.call('POST', `op=load&position=${encodeURIComponent(position)}`, '');
  }

  /**
   * Applies `changes` and records `position` (null: kept). `complete` ends a load. Trust and
   * liveness move only as `options` say (lua/gateway/key_table.lua's apply): `renew` renews
   * nginx's trust in its replica, `liveS` makes an id it does not hold nobody's for that many
   * seconds (0: withdrawn until a later apply says otherwise).
   */
  apply(
    changes: readonly KeyTableChange[],
    position: string | null,
    options: ApplyOptions = {},
  ): Promise<KeyTableAnswer> {
    let query = 'op=apply';
    if (position !== null) query += `&position=${encodeURIComponent(position)}`;
    if (options.complete) query += '&complete=1';
    if (options.renew) query += '&renew=1';
    if (options.liveS !== undefined) query += `&live=${Math.max(0, options.liveS).toFixed(3)}`;
    return this.call('POST', query, applyBody(changes));
  }

  /**
   * The records nginx holds for `ids` (at most READ_AT_ONCE): base64 of the bytes, or false for
   * none; null when nginx cannot say (away, no replica, an answer not of that shape).
   */
  async held(ids: readonly number[]): Promise<Map<number, string | false> | null> {
    const sent = await this.send('GET', `ids=${ids.join(',')}`, '');
    if ('why' in sent || sent.status !== 200) return null;
    try {
      const records = (JSON.parse(sent.text) as { records?: unknown }).records;
      if (typeof records !== 'object' || records === null) return null;
      const out = new Map<number, string | false>();
      for (const id of ids) {
        const value = (records as Record<string, unknown>)[String(id)];
        if (value !== false && typeof value !== 'string') return null;
        out.set(id, value);
      }
      return out;
    } catch {
      return null;
    }
  }

  private async call(method: 'GET' | 'POST', query: string, body: string): Promise<KeyTableAnswer> {
    const sent = await this.send(method, query, body);
    if ('why' in sent) return { kind: 'unreachable', why: sent.why };
    const { status, text } = sent;
    if (status === 404) return { kind: 'absent' };
    if (status === 409) return { kind: 'empty' };
    if (status === 204) return { kind: 'state', state: EMPTY_KEY_TABLE_STATE };
    let state: KeyTableState | null = null;
    try {
      state = status === 200 ? parseKeyTableState(JSON.parse(text)) : null;
    } catch {
      state = null;
    }
    return state ? { kind: 'state', state } : { kind: 'unreachable', why: `status ${status}` };
  }

  private send(
    method: 'GET' | 'POST',
    query: string,
    body: string,
  ): Promise<{ status: number; text: string } | { why: string }> {
    const path = query ? `${KEY_TABLE.controlPath}?${query}` : KEY_TABLE.controlPath;
    return new Promise((resolve) => {
      const req = request(
        {
          socketPath: this.socketPath,
          path,
          method,
          timeout: TIMEOUT_MS,
          headers: { 'Content-Type': 'text/plain', 'Content-Length': Buffer.byteLength(body) },
        },
        (res) => {
          const chunks: Buffer[] = [];
          let size = 0;
          res.on('data', (chunk: Buffer) => {
            size += chunk.length;
            if (size > MAX_ANSWER) req.destroy(new Error('answer too large'));
            else chunks.push(chunk);
          });
          res.on('error', (err) => resolve({ why: err.message }));
          res.on('end', () =>
            resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }),
          );
        },
      );
      req.on('timeout', () => req.destroy(new Error(`no answer within ${TIMEOUT_MS} ms`)));
      req.on('error', (err) => resolve({ why: err.message }));
      req.end(body);
    });
  }
}

/** How many ids one read of nginx's records names (the control location takes up to 1,000). */
export const READ_AT_ONCE = 200;

/** A replica that holds nothing and knows nothing (nginx's 204: no state to give). */
export const EMPTY_KEY_TABLE_STATE: KeyTableState = {
  phase: null,
  position: null,
  records: 0,
  full: false,
  trustedUntil: null,
  liveUntil: null,
  loadSeconds: null,
  capacityBytes: null,
  freeBytes: null,
};
