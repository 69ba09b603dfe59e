-- Requests per client, counted for the sidecar's usage table (api_client_usage): allowed ones
-- in a plain table of this worker (one field increment per request, no shared-dict lock),
-- added to shared memory once a second by the metrics timer; refusals by a rate limit straight
-- into shared memory (they are already off the fast path). Counts are kept per generation of
-- GENERATION_S seconds: the sidecar takes only finished generations, which nobody writes any
-- more, so a count is read and deleted without racing a worker's increment
-- (docs/decisions/20261125-rate-limits-and-usage.md).
local contract = require("gateway.contract")

local M = {}

-- A default.conf from before the limits dict: the budgets dict holds these keys as well (its
-- own keys start with other letters).
local dict = ngx.shared[contract.dicts.limits] or ngx.shared[contract.dicts.budgets]

-- The nginx module counts the hits it decides under the same keys (contract.usage).
local GENERATION_S = contract.usage.generation_s
-- Counts nobody collects (no sidecar for an hour) are dropped rather than fill the dict.
local KEEP_S = contract.usage.keep_s
local ALLOWED, LIMITED = contract.usage.allowed_prefix, contract.usage.limited_prefix

-- This worker's allowed requests by client row since its last flush (gateway.access adds).
M.allowed = {}

-- Pure: the generation a time falls in.
function M.generation(now)
  return math.floor(now / GENERATION_S)
end

local function key(kind, generation, row)
  return kind .. generation .. " " .. row
end

-- Adds this worker's allowed counts to shared memory and starts again from zero. Never yields.
function M.flush()
  if not dict then
    return
  end
  local allowed = M.allowed
  local generation = M.generation(ngx.now())
  for row, n in pairs(allowed) do
    local _, err = dict:incr(key(ALLOWED, generation, row), n, 0, KEEP_S)
    if err then
      ngx.log(ngx.WARN, "cannot count requests of client ", row, ": ", err)
    end
    -- Removing the field being visited is allowed during pairs().
    allowed[row] = nil
  end
end

-- One request of client `row` refused by its rate limit.
function M.limited(row)
  if dict then
    dict:incr(key(LIMITED, M.generation(ngx.now()), row), 1, 0, KEEP_S)
  end
end

-- Pure: "u34 12" -> "u", 34, "12"; nil for any other key.
function M.parse_key(k)
  local kind, generation, row = k:match("^(%a)(%d+) (%d+)$")
  if kind ~= ALLOWED and kind ~= LIMITED then
    return nil
  end
  return kind, tonumber(generation), row
end

-- The control socket's POST /usage: the finished generations' counts as
-- {"<unix start>|<row>": [allowed, limited]}, deleted as they are handed over. A generation is
-- finished one whole generation after its end, past any flush that started within it.
function M.drain()
  local out = {}
  if not dict then
    return out
  end
  ngx.update_time()
  local current = M.generation(ngx.now())
  for _, k in ipairs(dict:get_keys(0)) do
    local kind, generation, row = M.parse_key(k)
    if kind and generation < current - 1 then
      local n = dict:get(k)
      dict:delete(k)
      if n and n > 0 then
        local slot = (generation * GENERATION_S) .. "|" .. row
        local pair = out[slot]
        if not pair then
          pair = { 0, 0 }
          out[slot] = pair
        end
        pair[kind == ALLOWED and 1 or 2] = n
      end
    end
  end
  return out
end

return M
