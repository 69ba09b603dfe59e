-- Cases for lua/gateway/decision_key.lua, run inside nginx by test/lua/run.lua.
local case, eq = ...
local decision_key = require("gateway.decision_key")

case("decision_key: material separates credential and settings unambiguously", function()
  local a = decision_key.material("apk 1.x", "true\0false")
  local b = decision_key.material("apk 1.x\0true", "false")
  eq(a == b, true, "NUL cannot occur in a header, so equal material needs equal inputs")
  eq(decision_key.material("k", "true") ~= decision_key.material("k", "false"), true, "settings matter")
end)

case("decision_key: the key is a keyed hash, not the credential", function()
  decision_key.set_secret_for_tests("secret-one")
  local k1 = decision_key.key("apk 1.supersecret", "true")
  eq(#k1, 33, "d + 32 bytes")
  eq(k1:find("supersecret", 1, true), nil, "credential absent")
  eq(decision_key.key("apk 1.supersecret", "true"), k1, "deterministic")
  eq(decision_key.key("apk 1.supersecreT", "true") ~= k1, true, "one byte changes it")
  eq(decision_key.key("apk 1.supersecret", "false") ~= k1, true, "settings change it")
  decision_key.set_secret_for_tests("secret-two")
  eq(decision_key.key("apk 1.supersecret", "true") ~= k1, true, "another secret, another key")
end)
