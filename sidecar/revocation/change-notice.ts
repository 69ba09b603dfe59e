import { BEAT_NOTICE_PREFIX, CREATED_NOTICE_PREFIX } from '../../common/contract.js';
import type { FeedPosition } from '../replica/change-feed.js';

/** What a notification on the client changes channel says about one client row. */
export interface ChangeNotice {
  /** `changed`: updated or deleted (everything known about it is dead); `created`: new. */
  kind: 'changed' | 'created';
  row: number;
}

const ROW = /^[1-9][0-9]{0,15}$/;

/** Pure: a notification's payload (migrations 0003 and 0010), or null for anything else. */
export function parseChangeNotice(payload: string | undefined): ChangeNotice | null {
  if (payload === undefined) return null;
  const created = payload.startsWith(CREATED_NOTICE_PREFIX);
  const digits = created ? payload.slice(CREATED_NOTICE_PREFIX.length) : payload;
  if (!ROW.test(digits)) return null;
  const row = Number(digits);
  if (!Number.isSafeInteger(row)) return null;
  return { kind: created ? 'created' : 'changed', row };
}

/** A heartbeat notice (BEAT_NOTICE_PREFIX): who sent it, its number, and the feed's head. */
export interface BeatNotice {
  sender: string;
  n: number;
  head: FeedPosition;
}

const BEAT = /^([0-9a-f]{8,64}):(0|[1-9][0-9]{0,15}):([0-9a-f]{1,64}):(0|[1-9][0-9]{0,15})$/;

/** Pure: a heartbeat notice's payload, or null for anything else. */
export function parseBeatNotice(payload: string | undefined): BeatNotice | null {
  if (payload === undefined || !payload.startsWith(BEAT_NOTICE_PREFIX)) return null;
  const match = BEAT.exec(payload.slice(BEAT_NOTICE_PREFIX.length));
  if (!match) return null;
  const n = Number(match[2]);
  const position = Number(match[4]);
  if (!Number.isSafeInteger(n) || !Number.isSafeInteger(position)) return null;
  return { sender: match[1]!, n, head: { epoch: match[3]!, position } };
}
