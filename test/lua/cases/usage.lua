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

case("usage: a worker's batch of counts", function()
  local kind, generation, rest = usage.parse_key("u340000000 812:3")
  eq(kind, "u", "a batch is allowed requests")
  eq(generation, 340000000, "its generation")
  eq(rest, "812:3", "the worker and its sequence")
  eq(usage.parse_key("u1 2 3"), nil, "no other shape")
  local text = usage.lines({ ["12"] = 3, ["7"] = 1 })
  local back = usage.add_lines(text, {})
  eq(back["12"], 3, "a row's count survives the lines")
  eq(back["7"], 1, "every row")
  -- The module's lines and the Lua code's for one row add up; a damaged line is skipped.
  local sum = usage.add_lines("12 2\n12 5\nx 3\n9 \n", { ["12"] = 1 })
  eq(sum["12"], 8, "counts of one row add up")
  eq(sum["9"], nil, "a line without a count is skipped")
  eq(usage.lines({}), "", "nothing counted: no lines")
end)

case("usage: the drain hands finished batches over as sections of lines", function()
  local dict = ngx.shared[require("gateway.contract").dicts.limits]
    or ngx.shared[require("gateway.contract").dicts.budgets]
  ngx.update_time()
  local old = usage.generation(ngx.now()) - 2
  local start = old * require("gateway.contract").usage.generation_s
  dict:set("u" .. old .. " 812:1", "12 3\n7 1\n", 60)
  dict:set("x" .. old .. " 12", 4, 60)
  dict:set("u" .. (old + 2) .. " 812:2", "12 9\n", 60) -- the current generation: not yet
  local text = usage.drain()
  -- Sections in the dict's key order: compare as a set of sections.
  local sections = {}
  for section in text:gmatch("[ux] %d+\n[^ux]*") do
    sections[section] = true
  end
  eq(sections["u " .. start .. "\n12 3\n7 1\n"], true, "a batch as it was written")
  eq(sections["x " .. start .. "\n12 4\n"], true, "a per-client count as one line")
  eq(dict:get("u" .. old .. " 812:1"), nil, "handed over: deleted")
  eq(dict:get("u" .. (old + 2) .. " 812:2"), "12 9\n", "the current generation stays")
  dict:delete("u" .. (old + 2) .. " 812:2")
end)
