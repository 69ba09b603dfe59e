-- Per-client rate limits in shared memory: a sliding-window counter keyed by client row, as the
-- client's record (`rate_limit`) says, carried with the cached decision or key record (so a
-- change arrives with the same push as a revocation). Two shared-dict operations per request
-- of a limited client (incr of this window, get of the previous one), none for a client
-- without a limit; no sidecar round trip. Per nginx: each gateway pair counts on its own
-- (docs/decisions/20261125-rate-limits-and-usage.md).
local contract = require("gateway.contract")
local metrics = require("gateway.metrics")
local respond = require("gateway.respond")
local usage = require("gateway.usage")

local M = {}

local dict = ngx.shared[contract.dicts.limits] or ngx.shared[contract.dicts.budgets]
local H = contract.rate_limit_headers
-- The nginx module counts the limited requests it passes under the same keys.
local WINDOW_PREFIX = contract.rate_limit_windows.prefix
local MAX_PER_S = contract.rate_limit_windows.max_per_s
local POLICY_NAME = '"' .. H.policy_name .. '"'
local answer = contract.answers.rate_limited
local unreachable = contract.answers.rate_limit_store_unreachable
local STORE_CLOSED = contract.rate_limit_store.closed_key
local MAX_RETRY_AFTER = contract.rate_limit_store.max_retry_after_s
local floor, ceil, max = math.floor, math.ceil, math.max

-- Parsed limits by their header text: decoding a decision or record looks one up instead of
-- making a table; bounded, as the texts come from the sidecar.
local parsed = {}
local parsed_count = 0
local MAX_PARSED = 1024

-- Pure: "<requests> <per_seconds>" (the sidecar's X-Gateway-Rate-Limit) -> the limit, or nil
-- for an absent, empty or malformed text (then the client is not limited).
function M.parse(text)
  if text == nil or text == "" then
    return nil
  end
  local found = parsed[text]
  if found then
    return found
  end
  local requests, per = text:match("^([1-9]%d?%d?%d?%d?%d?%d?%d?%d?%d?) ([1-9]%d?%d?%d?%d?)$")
  requests, per = tonumber(requests), tonumber(per)
  if not requests or not per or per > MAX_PER_S then
    return nil
  end
  found = {
    text = text,
    requests = requests,
    per = per,
    policy = POLICY_NAME .. ";q=" .. requests .. ";w=" .. per,
  }
  if parsed_count < MAX_PARSED then
    parsed[text] = found
    parsed_count = parsed_count + 1
  end
  return found
end

-- Pure: the weighted count of a sliding window: the previous window's count as much as it
-- still overlaps the last `per` seconds, plus this window's.
function M.estimate(previous, current, elapsed, per)
  return previous * (1 - elapsed / per) + current
end

-- Pure: whole seconds (at least 1) until one more request fits, for a refused request whose
-- window (of `per` seconds, `elapsed` in) holds `current` allowed ones after `previous` in the
-- window before, under a limit of `requests`.
function M.retry_after(requests, per, previous, current, elapsed)
  local room = requests - 1 - current
  if room >= 0 and previous > 0 then
    -- Within this window, once the previous one's weight has fallen far enough.
    return max(1, ceil(per * (1 - room / previous) - elapsed))
  end
  -- In the next window, once this one's weight has fallen far enough.
  local into_next = current > 0 and per * (1 - (requests - 1) / current) or 0
  return max(1, ceil(per - elapsed + max(0, into_next)))
end

local function window_key(row, per, index)
  return WINDOW_PREFIX .. row .. " " .. per .. " " .. index
end

-- Pure: the Retry-After of a request refused while the store is closed, from the flag's value
-- (the sidecar's seconds): anything but a whole number in range is 1 s, never a pass.
function M.closed_wait(value)
  if type(value) == "number" and value >= 1 and value <= MAX_RETRY_AFTER then
    return floor(value)
  end
  return 1
end

-- rate_limits.redis.on_failure closed, while the sidecar cannot sync with Redis: nothing
-- counted, 503 RATE_LIMIT_STORE_UNREACHABLE (the module passes none of these either).
local function refuse_closed(limit, flag)
  local wait = M.closed_wait(flag)
  local header = ngx.header
  header[H.policy] = limit.policy
  header[H.state] = POLICY_NAME .. ";r=0;t=" .. wait
  metrics.refusal(unreachable.status)
  return respond.json(unreachable.status, unreachable.body, { ["Retry-After"] = wait })
end

-- A request of client `row` under `limit` (from M.parse): counted and let through with the
-- draft's headers, or answered 429 RATE_LIMITED with Retry-After (503 while the store is
-- closed). No closure: this is the hit path (LuaJIT would not compile it).
function M.admit(row, limit)
  -- Any value there closes (the sidecar's number, or anything else: never a pass by accident).
  local closed = dict:get(STORE_CLOSED)
  if closed ~= nil then
    return refuse_closed(limit, closed)
  end
  local per, requests = limit.per, limit.requests
  local now = ngx.now()
  local index = floor(now / per)
  local elapsed = now - index * per
  local key = window_key(row, per, index)
  -- Windows live two periods: the next one still weighs this one.
  local current, err = dict:incr(key, 1, 0, 2 * per)
  if not current then
    -- No room in shared memory: the request passes (a limit is not an authentication), logged.
    ngx.log(ngx.WARN, "rate limit of client ", row, " not counted: ", err)
    local allowed = usage.allowed
    allowed[row] = (allowed[row] or 0) + 1
    return
  end
  local previous = dict:get(window_key(row, per, index - 1)) or 0
  local estimate = M.estimate(previous, current, elapsed, per)
  local header = ngx.header
  header[H.policy] = limit.policy
  if estimate > requests then
    -- Not counted: a client that keeps sending still gets its rate, not less.
    dict:incr(key, -1)
    current = current - 1
    local wait = M.retry_after(requests, per, previous, current, elapsed)
    header[H.state] = POLICY_NAME .. ";r=0;t=" .. wait
    usage.limited(row)
    metrics.counts.rate_limited = metrics.counts.rate_limited + 1
    metrics.refusal(answer.status)
    return respond.json(answer.status, answer.body, { ["Retry-After"] = wait })
  end
  header[H.state] = POLICY_NAME .. ";r=" .. floor(requests - estimate) .. ";t="
    .. max(1, ceil(per - elapsed))
  local allowed = usage.allowed
  allowed[row] = (allowed[row] or 0) + 1
end

return M
