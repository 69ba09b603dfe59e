/**
 * nginx's control socket (a unix socket, never the public port) and every message it carries:
 * the sidecar's own reads and pushes, and what the bench and the tests read beside it. The
 * sidecar's files import the file they need; this index is for readers outside sidecar/.
 */

export { NginxControl, type RevocationFailures } from './control.js';
export { readControlSocket } from './control-socket.js';
export { type LuaCounters, parseCounters, REFUSED_COUNTER, readLuaCounters } from './counters.js';
export { type NginxFailureCount, type NginxFailureSource, parseFailureCounts } from './failures.js';
export { type DecisionInvalidator, NO_INVALIDATOR } from './invalidator.js';
export {
  type ApplyOptions,
  applyBody,
  EMPTY_KEY_TABLE_STATE,
  type KeyTableAnswer,
  type KeyTableChange,
  type KeyTableState,
  NginxKeyTable,
  parseKeyTableState,
  READ_AT_ONCE,
} from './key-table.js';
export { checkNginx, type NginxReadiness } from './readiness.js';
export { parseUsageCounts, type UsageCount, type UsageSource } from './usage-counts.js';
