/* Generated from common/contract.ts by generator/c-contract.ts: do not edit
 * (UPDATE_GOLDEN=1 npx vitest run test/unit/generator/contract.test.ts rewrites it). */
#ifndef GATEWAY_CONTRACT_H
#define GATEWAY_CONTRACT_H

#define GW_DIRECTIVE "gateway_hit"
#define GW_HMAC_KEY_SETTER ngx_http_gateway_hit_set_hmac_key
#define GW_USAGE_TAKER ngx_http_gateway_hit_usage_take
#define GW_NOBODY_TELLER ngx_http_gateway_hit_nobody
#define GW_LUA_MODULE_VERSION 10023
#define GW_MODULE_OFF_COUNTER "module_off"
#define GW_KEYS_DICT "gateway_keys"
#define GW_DECISIONS_DICT "gateway_decisions"
#define GW_REVOCATIONS_DICT "gateway_revocations"
#define GW_LIMITS_DICT "gateway_limits"
#define GW_METRICS_DICT "gateway_metrics"
#define GW_KEY_TABLE_DICT "gateway_key_table"
#define GW_KEY_TABLE_TRUSTED_UNTIL "#trusted_until"
#define GW_KEY_TABLE_VERSION "#version"
#define GW_KEY_TABLE_MAX_ID "#max_id"
#define GW_KEY_TABLE_LIVE_UNTIL "#live_until"
#define GW_KEY_TABLE_FULL "#full"
#define GW_KEY_TABLE_RECORDS "#records"
#define GW_KEY_TABLE_NEW_ID_BAND 1000
#define GW_KEY_TABLE_NEW_ID_REACH 10000000
#define GW_KEY_TABLE_CHANGED_PREFIX "#changed:"
#define GW_KEY_TABLE_CHANGED_SLOTS 64
#define GW_KEY_TABLE_CHANGED_IDS 32
#define GW_KEY_RECORD_VERSION 1
#define GW_KEY_RECORD_ADMIN 1
#define GW_KEY_RECORD_KEY 2
#define GW_KEY_RECORD_PREVIOUS 4
#define GW_KEY_RECORD_EXPIRES 8
#define GW_KEY_RECORD_LIMIT 16
#define GW_KEY_RECORD_GONE 32
#define GW_KEY_RECORD_RULES 64
#define GW_KEY_RECORD_HASH_BYTES 32
#define GW_API_KEYS_VARIABLE "api_keys_enabled"
#define GW_MAX_AGE_VARIABLE "auth_cache_max_age_ms"
#define GW_DECISION_INPUTS_VARIABLE "gateway_decision_inputs"
#define GW_CLIENT_ID_VARIABLE "client_id"
#define GW_CLIENT_NAME_VARIABLE "client_name"
#define GW_IS_ADMIN_VARIABLE "client_is_admin"
#define GW_METHOD_VARIABLE "client_auth_method"
#define GW_KEY_HIT_COUNTER "key_hit"
#define GW_CACHE_HIT_COUNTER "cache_hit"
#define GW_MODULE_HIT_COUNTER "module_hit"
#define GW_MODULE_COPIED_COUNTER "module_copied"
#define GW_USAGE_ALLOWED_PREFIX "u"
#define GW_USAGE_GENERATION_S 5
#define GW_USAGE_KEEP_S 3600
#define GW_MAX_HEADERS 100
#define GW_RATE_LIMIT_PREFIX "l"
#define GW_RATE_LIMIT_MAX_PER 86400
#define GW_RATE_LIMIT_STORE_CLOSED "#store_closed"
#define GW_RATE_LIMIT_POLICY_HEADER "RateLimit-Policy"
#define GW_RATE_LIMIT_STATE_HEADER "RateLimit"
#define GW_RATE_LIMIT_POLICY_NAME "client"
#define GW_SPAN_LOG_DIRECTIVE "gateway_span_log"
#define GW_SPAN_LOG_BATCH_BYTES 60000
#define GW_SPAN_LOG_FLUSH_MS 100
#define GW_ALLOWED_METHODS (NGX_HTTP_GET | NGX_HTTP_HEAD | NGX_HTTP_POST | NGX_HTTP_PUT | NGX_HTTP_PATCH | NGX_HTTP_DELETE | NGX_HTTP_OPTIONS)
#define GW_PERMISSION_METHODS { "GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS" }
#define GW_KEY_FIELD_CREATED 0
#define GW_KEY_FIELD_KIND 1
#define GW_KEY_FIELD_EXPIRES_AT 2
#define GW_KEY_FIELD_PREVIOUS_UNTIL 3
#define GW_KEY_FIELD_IS_ADMIN 4
#define GW_KEY_FIELD_CLIENT_ID 5
#define GW_KEY_FIELD_CLIENT_NAME 6
#define GW_KEY_FIELD_HASH 7
#define GW_KEY_FIELD_PREVIOUS_HASH 8
#define GW_KEY_FIELD_LIMIT 9
#define GW_KEY_FIELD_PERMISSIONS 10
#define GW_KEY_FIELD_COUNT 11
#define GW_DECISION_FIELD_CREATED 0
#define GW_DECISION_FIELD_ROW 1
#define GW_DECISION_FIELD_IS_ADMIN 2
#define GW_DECISION_FIELD_METHOD 3
#define GW_DECISION_FIELD_CLIENT_ID 4
#define GW_DECISION_FIELD_CLIENT_NAME 5
#define GW_DECISION_FIELD_LIMIT 6
#define GW_DECISION_FIELD_PERMISSIONS 7
#define GW_DECISION_FIELD_COUNT 8

#endif
