-- Cases for lua/gateway/fleet.lua, run inside nginx by test/lua/run.lua.
local case, eq = ...
local fleet = require("gateway.fleet")
local contract = require("gateway.contract")
local dict = ngx.shared[contract.dicts.limits]

case("fleet: a line is a window key, a delta and a lifetime", function()
  local key, delta, ttl = fleet.parse_line("l12 10 177000 5 15")
  eq(key, "l12 10 177000", "key")
  eq(delta, 5, "delta")
  eq(ttl, 15, "ttl")
  eq(select(2, fleet.parse_line("l12 10 177000 -3 4")), -3, "a negative delta takes back")
  eq(fleet.parse_line("u12 10 1 5 15"), nil, "not a window")
  eq(fleet.parse_line("l12 10 1 5 0"), nil, "no lifetime")
  eq(fleet.parse_line("l12 10 1 5 172801"), nil, "longer than two days")
  eq(fleet.parse_line("l12 10 1 x 5"), nil, "no number")
  eq(fleet.parse_line("l12 10 1 5"), nil, "a field missing")
end)

case("fleet: deltas are added to the windows, every window is answered", function()
  dict:flush_all()
  dict:set("l7 10 5", 3)
  dict:set("u1 2", "not a window")
  local out = fleet.exchange("l7 10 5 4 20\nl8 10 5 2 20\nbad line\nl9 10 5 0 20\n", true)
  eq(dict:get("l7 10 5"), 7, "added to what this pair counted")
  eq(dict:get("l8 10 5"), 2, "a window this pair had none of")
  eq(dict:get("l9 10 5"), nil, "a zero delta makes no window")
  local lines = {}
  for line in out:gmatch("[^\n]+") do
    lines[#lines + 1] = line
  end
  table.sort(lines)
  eq(table.concat(lines, ","), "l7 10 5 7,l8 10 5 2", "windows only")
  eq(fleet.exchange("", false), "", "list=0: nothing answered")
  dict:flush_all()
end)

case("fleet: ?closed= is whole seconds up to the contract's maximum", function()
  eq(fleet.parse_closed("0"), 0, "0 clears")
  eq(fleet.parse_closed("2"), 2, "seconds")
  eq(fleet.parse_closed(tostring(contract.rate_limit_store.max_retry_after_s)), 3600, "largest")
  eq(fleet.parse_closed("3601"), nil, "longer than the maximum")
  eq(fleet.parse_closed("1.5"), nil, "not whole")
  eq(fleet.parse_closed("-1"), nil, "negative")
  eq(fleet.parse_closed(""), nil, "empty")
  eq(fleet.parse_closed("99999999999999999999"), nil, "too many digits")
  eq(fleet.parse_closed(true), nil, "a bare ?closed")
end)

case("fleet: the store's flag is set without expiry and cleared by 0, windows untouched", function()
  dict:flush_all()
  dict:set("l7 10 5", 3)
  local key = contract.rate_limit_store.closed_key
  eq(fleet.set_closed(4), true, "set")
  eq(dict:get(key), 4, "the Retry-After held")
  eq(select(2, dict:ttl(key)), nil, "readable")
  eq(dict:ttl(key), 0, "no expiry: a sidecar that dies leaves it set")
  eq(fleet.exchange("", true), "l7 10 5 3\n", "not a window: never answered as one")
  eq(fleet.set_closed(0), true, "cleared")
  eq(dict:get(key), nil, "gone")
  eq(dict:get("l7 10 5"), 3, "the window kept")
  dict:flush_all()
end)
