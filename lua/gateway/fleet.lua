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
local STORE_CLOSED = contract.rate_limit_store.closed_key
local MAX_RETRY_AFTER = contract.rate_limit_store.max_retry_after_s

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

-- Pure: the control socket's ?closed= (whole seconds, 0 to the contract's maximum) -> the
-- number, or nil for anything else.
function M.parse_closed(text)
  local n = type(text) == "string" and text:find("^%d%d?%d?%d?$") and tonumber(text)
  if not n or n > MAX_RETRY_AFTER then
    return nil
  end
  return n
end

-- rate_limits.redis.on_failure closed: `seconds` (from M.parse_closed) above 0 sets the flag
-- ratelimit.lua and the module refuse on, the Retry-After of every refused request, for as
-- long as nobody clears it (no expiry: a sidecar that dies leaves it set); 0 clears it.
-- Whether it was applied.
function M.set_closed(seconds)
  if not dict then
    return false
  end
  if seconds == 0 then
    dict:delete(STORE_CLOSED)
    return true
  end
  local ok, err = dict:set(STORE_CLOSED, seconds)
  if not ok then
    ngx.log(ngx.ERR, "rate limit store flag not set: ", err)
  end
  return ok
end

return M
