-- The fleet's rate limit counts, with rate_limits.store redis (the sidecar's setting): the
-- sidecar adds to this pair's windows what the other pairs counted (from Redis), so
-- ratelimit.lua and the nginx module admit on the fleet's last known total plus what this pair
-- admitted since, without a round trip per request
-- (docs/decisions/20261202-global-rate-limits.md). Off the hot path: only the control socket.
local contract = require("gateway.contract")

local M = {}

local dict = ngx.shared[contract.dicts.limits] or ngx.shared[contract.dicts.budgets]
local PREFIX = contract.rate_limit_windows.prefix
local WINDOW = "^" .. PREFIX .. "%d+ %d+ %-?%d+$"
local MAX_TTL = 2 * contract.rate_limit_windows.max_per_s

-- Pure: a line "<window key> <delta> <ttl s>" -> key, delta, ttl; nil for anything else.
function M.parse_line(line)
  local key, delta, ttl = line:match("^(" .. PREFIX .. "%d+ %d+ %-?%d+) (%-?%d+) (%d+)$")
  delta, ttl = tonumber(delta), tonumber(ttl)
  if not key or not delta or not ttl or ttl < 1 or ttl > MAX_TTL then
    return nil
  end
  return key, delta, ttl
end

-- Adds the lines' deltas (the sidecar's, counts of the other pairs), then answers every window
-- held as lines "<window key> <count>". A window a delta would create lives `ttl` seconds,
-- as long as ratelimit.lua would let it (until its next window ends). Never yields.
function M.exchange(body, list)
  if not dict then
    return ""
  end
  for line in (body or ""):gmatch("[^\n]+") do
    local key, delta, ttl = M.parse_line(line)
    if key and delta ~= 0 then
      local _, err = dict:incr(key, delta, 0, ttl)
      if err then
        ngx.log(ngx.WARN, "rate limit window ", key, " not updated from the fleet: ", err)
      end
    end
  end
  if not list then
    return ""
  end
  local out, n = {}, 0
  for _, k in ipairs(dict:get_keys(0)) do
    if k:find(WINDOW) then
      local value = dict:get(k)
      if type(value) == "number" then
        n = n + 1
        out[n] = k .. " " .. value .. "\n"
      end
    end
  end
  return table.concat(out)
end

return M
