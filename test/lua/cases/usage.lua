-- Cases for lua/gateway/usage.lua, run inside nginx by test/lua/run.lua.
local case, eq = ...
local usage = require("gateway.usage")

case("usage: generations and the keys the sidecar collects", function()
  eq(usage.generation(1700000004.9), 340000000, "5 s generations")
  eq(usage.generation(1700000005), 340000001, "next")
  local kind, generation, row = usage.parse_key("u340000000 12")
  eq(kind, "u", "allowed")
  eq(generation, 340000000, "generation")
  eq(row, "12", "row")
  eq(usage.parse_key("x1 3"), "x", "limited")
  eq(usage.parse_key("l12 1 5"), nil, "a window key is not a count")
  eq(usage.parse_key("fINVALID_API_KEY|1"), nil, "a failure count is not usage")
end)
