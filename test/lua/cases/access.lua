-- Cases for lua/gateway/access.lua, run inside nginx by test/lua/run.lua.
local case, eq = ...
local access = require("gateway.access")

local SECRET = string.rep("Ab0_-", 8) .. "xyz" -- 43 characters

case("access: parse_api_key takes only the issued shape of a key", function()
  local id, secret = access.parse_api_key("apk 12." .. SECRET)
  eq(id, "12", "id")
  eq(secret, SECRET, "secret")
  eq((access.parse_api_key("APK  7." .. SECRET)), "7", "scheme in any case, several spaces")
  eq(access.parse_api_key("apk 012." .. SECRET), nil, "leading zero")
  eq(access.parse_api_key("apk " .. string.rep("9", 16) .. "." .. SECRET), nil, "16-digit id")
  eq((access.parse_api_key("apk " .. string.rep("9", 15) .. "." .. SECRET)), string.rep("9", 15), "15 digits")
  eq(access.parse_api_key("apk 1." .. SECRET:sub(2)), nil, "42 characters")
  eq(access.parse_api_key("apk 1." .. SECRET .. "x"), nil, "44 characters")
  eq(access.parse_api_key("apk 1." .. SECRET .. "\n"), nil, "a line feed after it")
  eq(access.parse_api_key("apk 1." .. SECRET:sub(2) .. "="), nil, "not base64url")
  eq(access.parse_api_key("apkx 1." .. SECRET), nil, "another scheme")
  eq(access.parse_api_key("Bearer 1." .. SECRET), nil, "bearer")
end)
