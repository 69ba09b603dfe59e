import {
  ALLOWED_METHODS,
  CONSOLE_NGINX,
  CONTROL,
  DECISION_FIELDS,
  DECISION_FROM_SIDECAR,
  DECISION_VARIABLES,
  FORWARDED_TO_SIDECAR,
  FRAME_MARKER,
  FRAME_QUESTION_HEADER,
  IDENTITY_FROM_SIDECAR,
  KEY_RECORD,
  KEY_TABLE,
  LEARNT_KEY_FIELDS,
  LUA_COUNTERS,
  MAX_AGE_LIMIT_MS,
  MAX_REQUEST_HEADERS,
  NGINX_MODULE,
  NGINX_NAMES,
  PERMISSIONS_TEXT,
  RATE_LIMIT_HEADERS,
  RATE_LIMIT_STORE,
  RATE_LIMIT_WINDOWS,
  REFUSAL_FROM_SIDECAR,
  REQUEST_ID,
  REQUIRE_ADMIN_HEADER,
  SIDECAR_PROOF,
  TOGGLE_VARIABLES,
  TRACE_CONTEXT,
  USAGE_COUNTS,
} from '../common/contract.js';
import {
  answerBody,
  type GatewayAnswer,
  LUA_ANSWERS,
  NGINX_ERROR_PAGES,
} from '../common/gateway-errors.js';
import { AMBIGUOUS_PATH_REASONS } from '../common/permissions.js';

/** Where the generated module lives, relative to the package root. */
export const LUA_CONTRACT_PATH = 'lua/gateway/contract.lua';

/** A Lua string literal; only printable ASCII is ever generated, so JSON's escapes are Lua's. */
export function luaString(value: string): string {
  if (!/^[\x20-\x7e]*$/.test(value))
    throw new Error(`not printable ASCII: ${JSON.stringify(value)}`);
  return JSON.stringify(value);
}

// Stryker disable next-line Regex: every variable is `$` then [a-z_] (contract test), so the first `$` is the leading one
const bare = (variable: string) => variable.replace(/^\$/, '');

function answer(a: GatewayAnswer): string {
  return `{ status = ${a.status}, code = ${luaString(a.code)}, message = ${luaString(a.message)}, body = ${luaString(answerBody(a))} }`;
}

function snake(name: string): string {
  return name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}

/**
 * `lua/gateway/contract.lua`, generated from common/contract.ts and common/gateway-errors.ts so
 * the Lua code never repeats a name or an error text. Committed; a test fails on drift.
 */
export function renderLuaContract(): string {
  // Stryker disable next-line ConditionalExpression: equivalent while 400 is the table's first row (template-model test pins the order)
  const badRequest = NGINX_ERROR_PAGES.find((p) => p.nginxStatus === 400)!;
  const answers = [
    ...Object.entries(LUA_ANSWERS).map(([name, a]) => `    ${snake(name)} = ${answer(a)},`),
    `    bad_request = ${answer(badRequest)},`,
  ];
  const lines = [
    '-- Generated from common/contract.ts and common/gateway-errors.ts by',
    '-- generator/lua-contract.ts: do not edit (UPDATE_GOLDEN=1 npx vitest run test/lua rewrites it).',
    'return {',
    '  dicts = {',
    `    decisions = ${luaString(NGINX_NAMES.decisionsDict)},`,
    `    revocations = ${luaString(NGINX_NAMES.revocationsDict)},`,
    `    metrics = ${luaString(NGINX_NAMES.metricsDict)},`,
    `    keys = ${luaString(NGINX_NAMES.keysDict)},`,
    `    budgets = ${luaString(NGINX_NAMES.budgetsDict)},`,
    `    limits = ${luaString(NGINX_NAMES.limitsDict)},`,
    '  },',
    `  auth_path = ${luaString(CONTROL.auth)},`,
    `  counters = { ${Object.keys(LUA_COUNTERS).map(luaString).join(', ')} },`,
    `  control_socket_variable = ${luaString(bare(NGINX_NAMES.controlSocketVariable))},`,
    `  toggle_variables = { api_keys = ${luaString(bare(TOGGLE_VARIABLES.apiKeys))}, oidc = ${luaString(bare(TOGGLE_VARIABLES.oidc))} },`,
    `  sidecar_variable = ${luaString(bare(NGINX_NAMES.sidecarVariable))},`,
    `  auth_timeout_variable = ${luaString(bare(NGINX_NAMES.authTimeoutVariable))},`,
    `  failure_budget_variable = ${luaString(bare(NGINX_NAMES.failureBudgetVariable))},`,
    '  forwarded = {',
    ...FORWARDED_TO_SIDECAR.map(
      (row) => `    { ${luaString(row.header)}, ${luaString(bare(row.variable))} },`,
    ),
    '  },',
    `  request_id_variable = ${luaString(bare(REQUEST_ID.variable))},`,
    `  trace_context = { ${luaString(TRACE_CONTEXT.header)}, ${luaString(bare(TRACE_CONTEXT.variable))} },`,
    `  require_admin_header = ${luaString(REQUIRE_ADMIN_HEADER)},`,
    `  proof = { header = ${luaString(SIDECAR_PROOF.header)}, file = ${luaString(SIDECAR_PROOF.file)}, code = ${luaString(SIDECAR_PROOF.code)} },`,
    `  frame_question_header = ${luaString(FRAME_QUESTION_HEADER)},`,
    `  frame_marker = ${luaString(FRAME_MARKER)},`,
    `  max_age_variable = ${luaString(bare(NGINX_NAMES.maxAgeVariable))},`,
    `  max_age_limit_s = ${MAX_AGE_LIMIT_MS / 1000},`,
    `  decision_inputs_variable = ${luaString(bare(NGINX_NAMES.decisionInputsVariable))},`,
    `  decision_inputs = { ${DECISION_VARIABLES.map((v) => luaString(bare(v))).join(', ')} },`,
    '  identity_headers = {',
    ...IDENTITY_FROM_SIDECAR.map((row) => `    ${row.role} = ${luaString(row.header)},`),
    '  },',
    '  identity_variables = {',
    ...IDENTITY_FROM_SIDECAR.map((row) => `    ${row.role} = ${luaString(bare(row.variable))},`),
    '  },',
    '  decision = {',
    `    client_row = ${luaString(DECISION_FROM_SIDECAR.clientRow)},`,
    `    valid_until = ${luaString(DECISION_FROM_SIDECAR.validUntil)},`,
    `    key_record = ${luaString(DECISION_FROM_SIDECAR.keyRecord)},`,
    `    key_hash = ${luaString(DECISION_FROM_SIDECAR.keyHash)},`,
    `    previous_key_hash = ${luaString(DECISION_FROM_SIDECAR.previousKeyHash)},`,
    `    previous_key_until = ${luaString(DECISION_FROM_SIDECAR.previousKeyUntil)},`,
    `    expires_at = ${luaString(DECISION_FROM_SIDECAR.expiresAt)},`,
    `    rate_limit = ${luaString(DECISION_FROM_SIDECAR.rateLimit)},`,
    `    permissions = ${luaString(DECISION_FROM_SIDECAR.permissions)},`,
    '  },',
    '  permissions = {',
    `    method_bits = { ${Object.entries(PERMISSIONS_TEXT.methodBits)
      .map(([method, bit]) => `${method} = ${bit}`)
      .join(', ')} },`,
    '    ambiguous = {',
    ...Object.entries(AMBIGUOUS_PATH_REASONS).map(
      ([name, why]) => `      ${snake(name)} = ${luaString(why)},`,
    ),
    '    },',
    '  },',
    '  rate_limit_headers = {',
    `    policy = ${luaString(RATE_LIMIT_HEADERS.policy)},`,
    `    state = ${luaString(RATE_LIMIT_HEADERS.state)},`,
    `    policy_name = ${luaString(RATE_LIMIT_HEADERS.policyName)},`,
    '  },',
    '  rate_limit_windows = {',
    `    prefix = ${luaString(RATE_LIMIT_WINDOWS.prefix)},`,
    `    max_per_s = ${RATE_LIMIT_WINDOWS.maxPerSeconds},`,
    '  },',
    '  rate_limit_store = {',
    `    closed_key = ${luaString(RATE_LIMIT_STORE.closedKey)},`,
    `    max_retry_after_s = ${RATE_LIMIT_STORE.maxRetryAfterSeconds},`,
    '  },',
    `  refusal_headers = { ${Object.values(REFUSAL_FROM_SIDECAR).map(luaString).join(', ')} },`,
    '  console = {',
    `    enabled_variable = ${luaString(bare(CONSOLE_NGINX.enabledVariable))},`,
    `    oidc_client_id_variable = ${luaString(bare(CONSOLE_NGINX.oidcClientIdVariable))},`,
    `    oidc_scope_variable = ${luaString(bare(CONSOLE_NGINX.oidcScopeVariable))},`,
    `    connect_origin_variable = ${luaString(bare(CONSOLE_NGINX.connectOriginVariable))},`,
    `    off_location = ${luaString(CONSOLE_NGINX.offLocation)},`,
    '  },',
    `  allowed_methods = { ${ALLOWED_METHODS.map(luaString).join(', ')} },`,
    `  max_request_headers = ${MAX_REQUEST_HEADERS},`,
    `  module_hmac_key_setter = ${luaString(NGINX_MODULE.hmacKeySetter)},`,
    `  learnt_key_fields = { ${LEARNT_KEY_FIELDS.map(luaString).join(', ')} },`,
    `  decision_fields = { ${DECISION_FIELDS.map(luaString).join(', ')} },`,
    `  module_usage_taker = ${luaString(NGINX_MODULE.usageTaker)},`,
    `  module_nobody_teller = ${luaString(NGINX_MODULE.nobodyTeller)},`,
    `  module_lua_version = ${NGINX_MODULE.luaModuleVersion},`,
    '  usage = {',
    `    allowed_prefix = ${luaString(USAGE_COUNTS.allowedPrefix)},`,
    `    limited_prefix = ${luaString(USAGE_COUNTS.limitedPrefix)},`,
    `    generation_s = ${USAGE_COUNTS.generationSeconds},`,
    `    keep_s = ${USAGE_COUNTS.keepSeconds},`,
    '  },',
    '  key_table = {',
    `    dict = ${luaString(KEY_TABLE.dict)},`,
    `    control_path = ${luaString(KEY_TABLE.controlPath)},`,
    `    trust_variable = ${luaString(bare(KEY_TABLE.trustVariable))},`,
    `    live_seconds = ${KEY_TABLE.liveSeconds},`,
    `    new_id_band = ${KEY_TABLE.newIdBand},`,
    `    new_id_reach = ${KEY_TABLE.newIdReach},`,
    `    changes = { prefix = ${luaString(KEY_TABLE.changes.prefix)}, slots = ${KEY_TABLE.changes.slots}, ids = ${KEY_TABLE.changes.ids} },`,
    '    state = {',
    ...Object.entries(KEY_TABLE.state).map(
      ([name, key]) => `      ${snake(name)} = ${luaString(key)},`,
    ),
    '    },',
    '  },',
    '  key_record = {',
    `    version = ${KEY_RECORD.version},`,
    `    hash_bytes = ${KEY_RECORD.hashBytes},`,
    `    flags = { ${Object.entries(KEY_RECORD.flags)
      .map(([name, bit]) => `${name} = ${bit}`)
      .join(', ')} },`,
    '  },',
    '  answers = {',
    ...answers,
    '  },',
    '}',
    '',
  ];
  return lines.join('\n');
}
