-- The decision cache's key: a keyed hash (HMAC-SHA1, which nginx's Lua module has built in)
-- of the credential and of every setting that shapes the decision. The credential itself is
-- never stored; the key of the hash lives only in this process's memory and is new at every
-- start, so a key found in a memory dump of the dict cannot be tested against guesses offline.
local M = {}

local secret = nil

-- Called by init_by_lua in the master: every worker forks with the same secret.
function M.init()
  local file = assert(io.open("/dev/urandom", "rb"))
  local bytes = file:read(32)
  file:close()
  assert(bytes and #bytes == 32, "could not read 32 random bytes")
  secret = bytes
end

-- Separator that cannot occur inside an nginx header value or variable taken from config.
local SEP = "\0"

-- Pure: the text that is hashed. `inputs` is every decision setting's value, already joined
-- by nginx (`$gateway_decision_inputs`), so the hot path builds no list for it.
function M.material(credential, inputs)
  return credential .. SEP .. inputs
end

-- The dict key: "d" plus 20 raw bytes. `hmac` is ngx.hmac_sha1 (passed in for tests).
function M.key(credential, inputs, hmac)
  assert(secret, "keying.init() was not called")
  return "d" .. (hmac or ngx.hmac_sha1)(secret, M.material(credential, inputs))
end

-- For tests: a fixed secret.
function M.set_secret_for_tests(value)
  secret = value
end

return M
