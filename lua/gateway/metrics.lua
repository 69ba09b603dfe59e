-- Counters of the Lua code (decision cache hits, misses, evictions; nginx's own refusals by
-- status). The hot path only adds 1 to a field of this worker's plain table: no shared-dict
-- lock per request. A timer adds each worker's counts to the shared dict about once a second,
-- and the control socket's /metrics reads the sums (the sidecar's /metrics fetches them).
local contract = require("gateway.contract")
local respond = require("gateway.respond")

local M = {}

local FLUSH_INTERVAL_S = 1
local REFUSED_PREFIX = "refused_"

-- This worker's counts since its last flush: the hot path increments these fields.
M.counts = {}
for i = 1, #contract.counters do
  M.counts[contract.counters[i]] = 0
end
-- Refusals by HTTP status, counted apart: their keys are only known when they happen.
M.refused = {}

-- Counts one refusal nginx answered itself (the sidecar's relayed ones included).
function M.refusal(status)
  local refused = M.refused
  refused[status] = (refused[status] or 0) + 1
end

-- Pure: hands every non-zero count to `add(key, n)` and zeroes it. `add` must not yield (a
-- shared dict's incr does not), so no request of this worker can count in between.
function M.drain(counts, refused, add)
  for key, n in pairs(counts) do
    if n > 0 then
      add(key, n)
      counts[key] = 0
    end
  end
  for status, n in pairs(refused) do
    if n > 0 then
      add(REFUSED_PREFIX .. status, n)
      refused[status] = 0
    end
  end
end

-- Adds this worker's counts to the shared dict and starts again from zero.
function M.flush()
  local dict = ngx.shared[contract.dicts.metrics]
  if not dict then
    return
  end
  M.drain(M.counts, M.refused, function(key, n)
    local _, err = dict:incr(key, n, 0)
    if err then
      ngx.log(ngx.WARN, "cannot add to the metrics counter ", key, ": ", err)
    end
  end)
end

-- init_worker: flush every second. A default.conf from before the metrics (no shared dict) keeps
-- working, without counters.
function M.start()
  if not ngx.shared[contract.dicts.metrics] then
    ngx.log(ngx.WARN, "no lua_shared_dict ", contract.dicts.metrics, ": Lua counters are off")
    return
  end
  local ok, err = ngx.timer.every(FLUSH_INTERVAL_S, function(premature)
    if not premature then
      M.flush()
      -- The requests counted per client (gateway.usage) go to shared memory at the same pace.
      require("gateway.usage").flush()
    end
  end)
  if not ok then
    ngx.log(ngx.ERR, "cannot start the metrics timer: ", err)
  end
end

-- The control socket's GET /metrics: every counter as one JSON object of numbers.
function M.serve()
  if ngx.req.get_method() ~= "GET" then
    return respond.json(405, contract.answers.method_not_allowed.body, { Allow = "GET" })
  end
  local dict = ngx.shared[contract.dicts.metrics]
  local out = {}
  for i = 1, #contract.counters do
    out[contract.counters[i]] = 0
  end
  if dict then
    for _, key in ipairs(dict:get_keys(0)) do
      out[key] = dict:get(key)
    end
  end
  respond.json_data(out)
end

return M
