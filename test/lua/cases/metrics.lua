-- Cases for lua/gateway/metrics.lua, run inside nginx by test/lua/run.lua.
local case, eq = ...
local metrics = require("gateway.metrics")

case("metrics.drain: hands over every non-zero count once, then zeroes it", function()
  local counts = { cache_hit = 3, cache_miss = 0, cache_eviction = 1 }
  local refused = { [401] = 2, [503] = 0 }
  local added = {}
  local function add(key, n)
    eq(added[key], nil, "added twice: " .. key)
    added[key] = n
  end
  metrics.drain(counts, refused, add)
  eq(added.cache_hit, 3, "hits")
  eq(added.cache_eviction, 1, "evictions")
  eq(added.cache_miss, nil, "nothing to add for a zero")
  eq(added.refused_401, 2, "refusals by status")
  eq(added.refused_503, nil, "no zero refusals")
  eq(counts.cache_hit, 0, "zeroed")
  eq(refused[401], 0, "zeroed")
  added = {}
  metrics.drain(counts, refused, add)
  eq(next(added), nil, "a second drain adds nothing")
end)

case("metrics: every counter the contract names starts at zero in the worker's table", function()
  local contract = require("gateway.contract")
  for i = 1, #contract.counters do
    eq(type(metrics.counts[contract.counters[i]]), "number", contract.counters[i])
  end
end)
