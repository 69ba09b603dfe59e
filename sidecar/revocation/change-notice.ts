import { CREATED_NOTICE_PREFIX } from '../../common/contract.js';

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
