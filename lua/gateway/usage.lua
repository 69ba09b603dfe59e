-- Requests per client, counted for the sidecar's usage table (api_client_usage): allowed ones
-- in a plain table of this worker (one field increment per request, no shared-dict lock), and
-- the nginx module's in its own table (ngx_http_gateway_hit_usage.c), both written to shared
-- memory once a second by the metrics timer as one batch per worker (lines "<row> <n>"), so a
-- request never costs a shared-dict entry of its client; refusals by a rate limit straight into
-- shared memory, one number per client (they are already off the fast path). Counts are kept per
-- generation of GENERATION_S seconds: the sidecar takes only finished generations, which nobody
-- writes any more, so a count is read and deleted without racing a worker's write
-- (docs/decisions/20261125-rate-limits-and-usage.md, docs/decisions/20261128-usage-batches.md).
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

-- The nginx module's counts, when it is loaded: its C function hands them over as text.
local take, take_buffer
do
  local ffi = require("ffi")
  local name = contract.module_usage_taker
  local TAKE_BUFFER = 65536
  local fn = require("gateway.module_functions").find(
    "size_t " .. name .. "(unsigned char *buf, size_t size);", name)
  if fn then
    take_buffer = ffi.new("unsigned char[?]", TAKE_BUFFER)
    take = function()
      local parts, n = {}, 0
      -- Until it says 0, without a yield in between (ngx_http_gateway_hit_usage.h).
      while true do
        local len = tonumber(fn(take_buffer, TAKE_BUFFER))
        if len == 0 then
          break
        end
        n = n + 1
        parts[n] = ffi.string(take_buffer, len)
      end
      return table.concat(parts)
    end
  end
end

-- Pure: a worker's counts {row = n} as a batch's lines.
function M.lines(allowed)
  local out, n = {}, 0
  for row, count in pairs(allowed) do
    n = n + 1
    out[n] = row .. " " .. count .. "\n"
  end
  return table.concat(out)
end

-- Pure: a batch's lines added to `into` {row = n}; malformed lines are skipped.
function M.add_lines(text, into)
  for row, count in text:gmatch("(%d+) (%d+)\n") do
    into[row] = (into[row] or 0) + tonumber(count)
  end
  return into
end

local sequence = 0

-- Adds this worker's allowed counts (its Lua code's and the module's) to shared memory as one
-- batch and starts again from zero. Never yields.
function M.flush()
  if not dict then
    return
  end
  local text = M.lines(M.allowed) .. (take and take() or "")
  M.allowed = {}
  if text == "" then
    return
  end
  sequence = sequence + 1
  local batch = key(ALLOWED, M.generation(ngx.now()), ngx.worker.pid() .. ":" .. sequence)
  -- Never by evicting: the dict holds the rate limits' windows too.
  local ok, err = dict:safe_set(batch, text, KEEP_S)
  if not ok then
    ngx.log(ngx.WARN, "cannot keep the request counts of ", #text, " bytes (", err, "): dropped")
  end
end

-- One request of client `row` refused by its rate limit.
function M.limited(row)
  if dict then
    dict:incr(key(LIMITED, M.generation(ngx.now()), row), 1, 0, KEEP_S)
  end
end

-- Pure: "u34 12" -> "u", 34, "12" (a client's count), "u34 812:3" -> "u", 34, "812:3" (a
-- worker's batch); nil for any other key.
function M.parse_key(k)
  local kind, generation, rest = k:match("^(%a)(%d+) ([%d:]+)$")
  if kind ~= ALLOWED and kind ~= LIMITED then
    return nil
  end
  return kind, tonumber(generation), rest
end

-- The control socket's POST /usage: the finished generations' counts as text, deleted as they
-- are handed over: sections, each a line "<kind> <unix start>" ("u": allowed, "x": refused by
-- a rate limit) and then lines "<row> <n>" (sidecar/usage/usage-counts.ts reads it). A batch
-- goes out as it was written, unparsed: with callers spread over 10⁵ keys a drain holds some
-- 10⁵ lines, and building them into a table and JSON here stopped this worker for 0.1 to 0.3 s.
-- A generation is finished one whole generation after its end, past any flush within it.
function M.drain()
  if not dict then
    return ""
  end
  local out, n = {}, 0
  ngx.update_time()
  local current = M.generation(ngx.now())
  for _, k in ipairs(dict:get_keys(0)) do
    local kind, generation, rest = M.parse_key(k)
    if kind and generation < current - 1 then
      local value = dict:get(k)
      dict:delete(k)
      local lines
      if type(value) == "string" then
        lines = value
      elseif value and value > 0 and not rest:find(":", 1, true) then
        lines = rest .. " " .. value .. "\n"
      end
      if lines then
        n = n + 1
        out[n] = kind .. " " .. (generation * GENERATION_S) .. "\n" .. lines
      end
    end
  end
  return table.concat(out)
end

return M
