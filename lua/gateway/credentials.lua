-- The API key's shape as nginx reads it from the Authorization header: the same rule as the
-- sidecar's (sidecar/keys/api-key.ts) and the nginx module's
-- (ngx_http_gateway_hit_parse_api_key); docs/architecture.md's twins table names the tests
-- that hold the three equal.
local bor = require("bit").bor

local M = {}

local byte, find, sub = string.byte, string.find, string.sub

-- `apk <id>.<secret>` in the only shape a key is issued in (an id that is a safe integer, a
-- 43-character base64url secret) -> id, secret. Anything else is the sidecar's to judge (it
-- says why it is malformed). Byte compares and finds without captures: every guessed key of a
-- flood comes this way, and ngx.re.match with captures ran in LuaJIT's interpreter here (its
-- capture loop aborts the trace): 1.6 µs a key against 0.4 µs.
-- Agrees with the PCRE form ^[Aa][Pp][Kk] +([1-9][0-9]{0,14})\.([A-Za-z0-9_-]{43})\z (the
-- Lua cases compare the two on random text).
local SECRET_CHARS = 43
local REST = "^[1-9]%d*%.[A-Za-z0-9_%-]+$"
function M.parse_api_key(credential)
  local a, p, k, space = byte(credential, 1, 4)
  -- `bor(x, 32)`: the letter in lower case (and no other byte maps to it).
  if space ~= 32 or bor(a, 32) ~= 97 or bor(p, 32) ~= 112 or bor(k, 32) ~= 107 then
    return nil
  end
  -- Past the spaces (a find, not a loop: a loop here stops LuaJIT compiling the caller).
  local at = find(credential, "[^ ]", 5)
  local dot = at and find(credential, ".", at, true)
  if not dot or dot - at > 15 or #credential - dot ~= SECRET_CHARS
      or not find(credential, REST, at) then
    return nil
  end
  return sub(credential, at, dot - 1), sub(credential, dot + 1)
end

return M
