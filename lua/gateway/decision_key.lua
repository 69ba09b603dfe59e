-- The decision cache's key: a keyed hash (HMAC-SHA-256, gateway.sha256) of the credential and of every setting that shapes the decision. The credential itself is
-- never stored; the key of the hash lives only in this process's memory and is new at every
-- start, so a key found in a memory dump of the dict cannot be tested against guesses offline.
local contract = require("gateway.contract")
local sha256 = require("gateway.sha256")

local M = {}

local secret = nil

-- Called by init_by_lua in the master: every worker forks with the same secret.
function M.init()
  local file = assert(io.open("/dev/urandom", "rb"))
  local bytes = file:read(32)
  file:close()
  assert(bytes and #bytes == 32, "could not read 32 random bytes")
  secret = bytes
  sha256.set_hmac_key(bytes)
  M.share_with_module(bytes)
end

-- The gateway's nginx module (nginx-module/) finds cached decisions by the same keyed hash: it
-- gets the key here, in the master, and the workers inherit it. Without the module loaded (a
-- main nginx.conf without its load_module line) there is nobody to tell: the Lua code alone
-- decides, as before. With it, this Lua module's version goes along: the nginx module calls
-- lua-nginx-module's private functions, and switches itself off for a version it was not built
-- and tested against (contract NGINX_MODULE.luaModuleVersion), which the error log and the
-- counter `module_off` then say. Returns whether the module took the key.
function M.share_with_module(bytes)
  local name = contract.module_hmac_key_setter
  local setter = require("gateway.module_functions").find("int " .. name
    .. "(const unsigned char *key, size_t len, unsigned int lua_version);", name)
  if not setter then
    return false
  end
  local taken = setter(bytes, #bytes, ngx.config.ngx_lua_version or 0) == 1
  local metrics = ngx.shared[contract.dicts.metrics]
  if metrics then
    metrics:set("module_off", taken and 0 or 1)
  end
  if not taken then
    ngx.log(ngx.WARN, "the gateway's nginx module is off: it was built and tested against ",
      "lua-nginx-module ", contract.module_lua_version, ", this is ", ngx.config.ngx_lua_version,
      "; the Lua code decides every request")
  end
  return taken
end

-- Separator that cannot occur inside an nginx header value or variable taken from config.
local SEP = "\0"

-- Pure: the text that is hashed. `inputs` is every decision setting's value, already joined
-- by nginx (`$gateway_decision_inputs`), so the hot path builds no list for it.
function M.material(credential, inputs)
  return credential .. SEP .. inputs
end

-- The dict key: "d" plus 32 raw bytes.
function M.key(credential, inputs)
  assert(secret, "decision_key.init() was not called")
  return "d" .. sha256.hmac(M.material(credential, inputs))
end

-- For tests: a fixed secret.
function M.set_secret_for_tests(value)
  secret = value
  sha256.set_hmac_key(value)
end

return M
