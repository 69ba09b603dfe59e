/**
 * The gateway's nginx module as the generator and the Lua code name it.
 */

/**
 * The gateway's nginx module (nginx-module/): decides a seen API key's hit in C, without
 * entering Lua's access phase, in locations that say `<directive> on;` (default.conf's
 * `location /`). Anything it does not pass goes to the Lua access code unchanged
 * (docs/decisions/20261125-hit-in-c.md).
 */
export const NGINX_MODULE = {
  directive: 'gateway_hit',
  file: 'ngx_http_gateway_hit_module.so',
  /**
   * The module's C function that takes the decision cache's hashing key from the Lua code
   * (lua/gateway/decision_key.lua, in the master before the workers fork), so both hash alike.
   */
  hmacKeySetter: 'ngx_http_gateway_hit_set_hmac_key',
  /**
   * The module's C function that hands its per-client request counts (this worker's, since the
   * last call) to lua/gateway/usage.lua's flush, as lines `<row> <n>`
   * (docs/decisions/20261128-usage-batches.md).
   */
  usageTaker: 'ngx_http_gateway_hit_usage_take',
  /**
   * The module's C function the Lua access code asks first, with the request: 1 when the module
   * found the request's API key id to be nobody's in the trusted, live key table (the state
   * lua/gateway/key_table.lua's lookup reads), so Lua refuses it without reading the credential
   * or the header block: no Lua string is made of a guessed key's bytes
   * (docs/decisions/20261129-guessed-ids-in-c.md).
   */
  nobodyTeller: 'ngx_http_gateway_hit_nobody',
  /**
   * The lua-nginx-module the module is built and tested against, as `ngx.config.ngx_lua_version`
   * counts it (0.10.23, Debian 12's): the module calls that module's private functions, declared
   * by hand. The Lua code hands its version over with the hashing key (the way resty.core pins
   * it), and for any other the module switches itself off at start: the Lua code decides every
   * request, the error log says why and the counter `module_off` is 1.
   */
  luaModuleVersion: 10023,
} as const;
