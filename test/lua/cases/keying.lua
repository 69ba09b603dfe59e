-- Cases for lua/gateway/keying.lua, run inside nginx by test/lua/run.lua.
local case, eq = ...
local keying = require("gateway.keying")

case("keying: material separates credential and settings unambiguously", function()
  local a = keying.material("apk 1.x", "true\0false")
  local b = keying.material("apk 1.x\0true", "false")
  eq(a == b, true, "NUL cannot occur in a header, so equal material needs equal inputs")
  eq(keying.material("k", "true") ~= keying.material("k", "false"), true, "settings matter")
end)

case("keying: the key is a keyed hash, not the credential", function()
  keying.set_secret_for_tests("secret-one")
  local k1 = keying.key("apk 1.supersecret", "true")
  eq(#k1, 33, "d + 32 bytes")
  eq(k1:find("supersecret", 1, true), nil, "credential absent")
  eq(keying.key("apk 1.supersecret", "true"), k1, "deterministic")
  eq(keying.key("apk 1.supersecreT", "true") ~= k1, true, "one byte changes it")
  eq(keying.key("apk 1.supersecret", "false") ~= k1, true, "settings change it")
  keying.set_secret_for_tests("secret-two")
  eq(keying.key("apk 1.supersecret", "true") ~= k1, true, "another secret, another key")
end)
