import {
  ALLOWED_METHODS,
  DECISION_FIELDS,
  IDENTITY_FROM_SIDECAR,
  KEY_RECORD,
  KEY_TABLE,
  LEARNT_KEY_FIELDS,
  type LUA_COUNTERS,
  MAX_REQUEST_HEADERS,
  NGINX_MODULE,
  NGINX_NAMES,
  NGINX_SPAN_RECORD,
  PERMISSIONS_TEXT,
  RATE_LIMIT_HEADERS,
  RATE_LIMIT_STORE,
  RATE_LIMIT_WINDOWS,
  TOGGLE_VARIABLES,
  USAGE_COUNTS,
} from '../common/contract.js';

/** Where the generated header lives, relative to the package root. */
export const C_CONTRACT_PATH = 'nginx-module/gateway_contract.h';

/** A C string literal; only printable ASCII without quotes or backslashes is ever generated. */
export function cString(value: string): string {
  if (!/^[\x20-\x7e]*$/.test(value) || /["\\]/.test(value))
    throw new Error(`not a plain C string: ${JSON.stringify(value)}`);
  return `"${value}"`;
}

const bare = (variable: string) => variable.replace(/^\$/, '');

const identity = (role: string) => {
  const row = IDENTITY_FROM_SIDECAR.find((r) => r.role === role);
  if (!row) throw new Error(`no identity variable for ${role}`);
  return cString(bare(row.variable));
};

/** A C identifier, as it is: letters, digits and underscores. */
export function identifier(value: string): string {
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(value)) throw new Error(`not a C identifier: ${value}`);
  return value;
}

/** A counter's key in the metrics dict, checked against the contract's list. */
const counter = (key: keyof typeof LUA_COUNTERS) => cString(key);

// nginx's method bits (ngx_http_request.h) for the methods the gateway serves.
const METHOD_BITS: Record<string, string> = {
  GET: 'NGX_HTTP_GET',
  HEAD: 'NGX_HTTP_HEAD',
  POST: 'NGX_HTTP_POST',
  PUT: 'NGX_HTTP_PUT',
  PATCH: 'NGX_HTTP_PATCH',
  DELETE: 'NGX_HTTP_DELETE',
  OPTIONS: 'NGX_HTTP_OPTIONS',
};

/** A record's field positions (0-based) and count, as C defines: `<PREFIX>_CLIENT_ID 5`. */
function fieldIndexes(prefix: string, fields: readonly string[]): string[] {
  return [
    ...fields.map((field, i) => `#define ${prefix}_${identifier(field.toUpperCase())} ${i}`),
    `#define ${prefix}_COUNT ${fields.length}`,
  ];
}

/**
 * `nginx-module/gateway_contract.h`, generated from common/contract.ts like
 * lua/gateway/contract.lua, so the C module never repeats a name the Lua code and the generator
 * use. Committed; a test fails on drift.
 */
export function renderCContract(): string {
  const methods = ALLOWED_METHODS.map((m) => {
    const bit = METHOD_BITS[m];
    if (!bit) throw new Error(`no nginx method bit for ${m}`);
    return bit;
  });
  return [
    '/* Generated from common/contract.ts by generator/c-contract.ts: do not edit',
    ' * (UPDATE_GOLDEN=1 npx vitest run test/unit/generator/contract.test.ts rewrites it). */',
    '#ifndef GATEWAY_CONTRACT_H',
    '#define GATEWAY_CONTRACT_H',
    '',
    `#define GW_DIRECTIVE ${cString(NGINX_MODULE.directive)}`,
    `#define GW_HMAC_KEY_SETTER ${identifier(NGINX_MODULE.hmacKeySetter)}`,
    `#define GW_USAGE_TAKER ${identifier(NGINX_MODULE.usageTaker)}`,
    `#define GW_NOBODY_TELLER ${identifier(NGINX_MODULE.nobodyTeller)}`,
    `#define GW_LUA_MODULE_VERSION ${NGINX_MODULE.luaModuleVersion}`,
    `#define GW_MODULE_OFF_COUNTER ${counter('module_off')}`,
    `#define GW_KEYS_DICT ${cString(NGINX_NAMES.keysDict)}`,
    `#define GW_DECISIONS_DICT ${cString(NGINX_NAMES.decisionsDict)}`,
    `#define GW_REVOCATIONS_DICT ${cString(NGINX_NAMES.revocationsDict)}`,
    `#define GW_LIMITS_DICT ${cString(NGINX_NAMES.limitsDict)}`,
    `#define GW_METRICS_DICT ${cString(NGINX_NAMES.metricsDict)}`,
    `#define GW_KEY_TABLE_DICT ${cString(KEY_TABLE.dict)}`,
    `#define GW_KEY_TABLE_TRUSTED_UNTIL ${cString(KEY_TABLE.state.trustedUntil)}`,
    `#define GW_KEY_TABLE_VERSION ${cString(KEY_TABLE.state.version)}`,
    `#define GW_KEY_TABLE_MAX_ID ${cString(KEY_TABLE.state.maxId)}`,
    `#define GW_KEY_TABLE_LIVE_UNTIL ${cString(KEY_TABLE.state.liveUntil)}`,
    `#define GW_KEY_TABLE_FULL ${cString(KEY_TABLE.state.full)}`,
    `#define GW_KEY_TABLE_RECORDS ${cString(KEY_TABLE.state.records)}`,
    `#define GW_KEY_TABLE_NEW_ID_BAND ${KEY_TABLE.newIdBand}`,
    `#define GW_KEY_TABLE_NEW_ID_REACH ${KEY_TABLE.newIdReach}`,
    `#define GW_KEY_TABLE_CHANGED_PREFIX ${cString(KEY_TABLE.changes.prefix)}`,
    `#define GW_KEY_TABLE_CHANGED_SLOTS ${KEY_TABLE.changes.slots}`,
    `#define GW_KEY_TABLE_CHANGED_IDS ${KEY_TABLE.changes.ids}`,
    `#define GW_KEY_RECORD_VERSION ${KEY_RECORD.version}`,
    `#define GW_KEY_RECORD_ADMIN ${KEY_RECORD.flags.admin}`,
    `#define GW_KEY_RECORD_KEY ${KEY_RECORD.flags.key}`,
    `#define GW_KEY_RECORD_PREVIOUS ${KEY_RECORD.flags.previous}`,
    `#define GW_KEY_RECORD_EXPIRES ${KEY_RECORD.flags.expires}`,
    `#define GW_KEY_RECORD_LIMIT ${KEY_RECORD.flags.limit}`,
    `#define GW_KEY_RECORD_GONE ${KEY_RECORD.flags.gone}`,
    `#define GW_KEY_RECORD_RULES ${KEY_RECORD.flags.rules}`,
    `#define GW_KEY_RECORD_HASH_BYTES ${KEY_RECORD.hashBytes}`,
    `#define GW_API_KEYS_VARIABLE ${cString(bare(TOGGLE_VARIABLES.apiKeys))}`,
    `#define GW_MAX_AGE_VARIABLE ${cString(bare(NGINX_NAMES.maxAgeVariable))}`,
    `#define GW_DECISION_INPUTS_VARIABLE ${cString(bare(NGINX_NAMES.decisionInputsVariable))}`,
    `#define GW_CLIENT_ID_VARIABLE ${identity('client_id')}`,
    `#define GW_CLIENT_NAME_VARIABLE ${identity('client_name')}`,
    `#define GW_IS_ADMIN_VARIABLE ${identity('is_admin')}`,
    `#define GW_METHOD_VARIABLE ${identity('method')}`,
    `#define GW_KEY_HIT_COUNTER ${counter('key_hit')}`,
    `#define GW_CACHE_HIT_COUNTER ${counter('cache_hit')}`,
    `#define GW_MODULE_HIT_COUNTER ${counter('module_hit')}`,
    `#define GW_MODULE_COPIED_COUNTER ${counter('module_copied')}`,
    `#define GW_USAGE_ALLOWED_PREFIX ${cString(USAGE_COUNTS.allowedPrefix)}`,
    `#define GW_USAGE_GENERATION_S ${USAGE_COUNTS.generationSeconds}`,
    `#define GW_USAGE_KEEP_S ${USAGE_COUNTS.keepSeconds}`,
    `#define GW_MAX_HEADERS ${MAX_REQUEST_HEADERS}`,
    `#define GW_RATE_LIMIT_PREFIX ${cString(RATE_LIMIT_WINDOWS.prefix)}`,
    `#define GW_RATE_LIMIT_MAX_PER ${RATE_LIMIT_WINDOWS.maxPerSeconds}`,
    `#define GW_RATE_LIMIT_STORE_CLOSED ${cString(RATE_LIMIT_STORE.closedKey)}`,
    `#define GW_RATE_LIMIT_POLICY_HEADER ${cString(RATE_LIMIT_HEADERS.policy)}`,
    `#define GW_RATE_LIMIT_STATE_HEADER ${cString(RATE_LIMIT_HEADERS.state)}`,
    `#define GW_RATE_LIMIT_POLICY_NAME ${cString(RATE_LIMIT_HEADERS.policyName)}`,
    `#define GW_SPAN_LOG_DIRECTIVE ${cString(NGINX_SPAN_RECORD.directive)}`,
    `#define GW_SPAN_LOG_BATCH_BYTES ${NGINX_SPAN_RECORD.batchBytes}`,
    `#define GW_SPAN_LOG_FLUSH_MS ${NGINX_SPAN_RECORD.flushMs}`,
    `#define GW_ALLOWED_METHODS (${methods.join(' | ')})`,
    // A rule's method bits (PERMISSIONS_TEXT): bit i is this list's method i.
    `#define GW_PERMISSION_METHODS { ${Object.entries(PERMISSIONS_TEXT.methodBits)
      .sort(([, a], [, b]) => a - b)
      .map(([m]) => cString(m))
      .join(', ')} }`,
    ...fieldIndexes('GW_KEY_FIELD', LEARNT_KEY_FIELDS),
    ...fieldIndexes('GW_DECISION_FIELD', DECISION_FIELDS),
    '',
    '#endif',
    '',
  ].join('\n');
}
