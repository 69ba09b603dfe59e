-- Cases for lua/gateway/budget.lua, run inside nginx by test/lua/run.lua.
local case, eq = ...
local budget = require("gateway.budget")

case("budget: the setting is three numbers", function()
  local b = budget.parse("20 200 60")
  eq(b.per_key, 20, "per key")
  eq(b.per_address, 200, "per address")
  eq(b.window, 60, "window")
  eq(budget.parse("20 200 0"), nil, "no window")
  eq(budget.parse("20 200"), nil, "two numbers")
  eq(budget.parse(nil), nil, "absent")
end)
