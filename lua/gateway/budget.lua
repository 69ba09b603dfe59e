-- Failure budgets in shared memory: failed authentications per claimed API key id and per
-- source address, counted in fixed windows. Past a budget nginx answers 429 itself, asking no
-- one. Only failures spend, and only requests nginx cannot pass from memory are refused: a
-- caller whose decision is cached never meets a budget (gateway.access checks that first).
local contract = require("gateway.contract")

local M = {}

local budgets = ngx.shared[contract.dicts.budgets]

-- Pure: "<per key id> <per address> <window s>" -> the three numbers, or nil.
function M.parse(setting)
  local per_key, per_address, window = (setting or ""):match("^(%d+) (%d+) (%d+)$")
  per_key, per_address, window = tonumber(per_key), tonumber(per_address), tonumber(window)
  if not per_key or window < 1 then
    return nil
  end
  return { per_key = per_key, per_address = per_address, window = window }
end

-- The setting changes only with a reload: parsed once per distinct text.
local parsed = {}
local function limits()
  local setting = ngx.var[contract.failure_budget_variable]
  local found = parsed[setting or ""]
  if found == nil then
    -- A default.conf from before the budgets (no `set`): both off, as before.
    found = M.parse(setting) or { per_key = 0, per_address = 0, window = 60 }
    parsed[setting or ""] = found
  end
  return found
end

local function key_of_id(id)
  return "k" .. id
end

-- The one-question-a-second slot of an attacked key id (M.refill_slot).
local function key_of_refill(id)
  return "r" .. id
end

local function key_of_address()
  return "a" .. ngx.var.binary_remote_addr
end

-- Seconds until the window of `key` ends, at least 1.
local function retry_after(key)
  local ttl = budgets:ttl(key)
  return math.max(1, math.ceil(ttl or 1))
end

local function spent(key, limit)
  if limit <= 0 then
    return nil
  end
  local n = budgets:get(key)
  if n and n >= limit then
    return retry_after(key)
  end
  return nil
end

-- When a budget that applies is spent: the seconds to wait (for Retry-After) and which one
-- ("address" or "key"), else nil. `id` is the claimed API key id, or nil for other credentials.
function M.exhausted(id)
  if not budgets then
    return nil
  end
  local l = limits()
  local wait = spent(key_of_address(), l.per_address)
  if wait then
    return wait, "address"
  end
  if id then
    wait = spent(key_of_id(id), l.per_key)
    if wait then
      return wait, "key"
    end
  end
  return nil
end

-- One more failure against the claimed key id, when given, and, when the sidecar was asked
-- (`asked`), against the address: the address budget bounds what one source costs the sidecar
-- and PostgreSQL; a refusal nginx decides from memory costs about what a hit does.
function M.spend(id, asked)
  if not budgets then
    return
  end
  local l = limits()
  if asked and l.per_address > 0 then
    budgets:incr(key_of_address(), 1, 0, l.window)
  end
  if id and l.per_key > 0 then
    budgets:incr(key_of_id(id), 1, 0, l.window)
  end
end

-- A client was just created with id `id`: guesses made while no client had it spent its
-- budget against nothing, and must not meet the new client's first callers with 429 (ids come
-- from a sequence, so the next ones are easy to aim at). Its owner's first requests then ask
-- the sidecar, as any first sight does; the guesses after the creation count afresh.
function M.forgive(id)
  if budgets then
    budgets:delete(key_of_id(id))
    budgets:delete(key_of_refill(id))
  end
end

-- With a key id's budget spent and no record of it, one question a second may still go to the
-- sidecar, so the record of an attacked id is learnt again once it expires and the right
-- secret keeps passing from memory. True for the one request that may ask.
function M.refill_slot(id)
  return budgets ~= nil and budgets:add(key_of_refill(id), true, 1) == true
end

-- Refusals nginx decided itself, counted for the sidecar's failure counts (auth-failures):
-- `row` is the client's id when it exists, nil for a guessed id or no credential.
local FAILURE = "f"
local SEP = "|"

function M.count_failure(reason, row)
  if budgets then
    budgets:incr(FAILURE .. reason .. SEP .. (row or ""), 1, 0)
  end
end

-- The control socket's POST /failures: the counts since the last call, as JSON
-- {"<reason>|<row>": n}; each count is taken by subtracting it, so none is lost or read twice.
function M.drain_failures()
  local out = {}
  if not budgets then
    return out
  end
  for _, key in ipairs(budgets:get_keys(0)) do
    if key:sub(1, 1) == FAILURE then
      local n = budgets:get(key)
      if n and n > 0 then
        budgets:incr(key, -n)
        out[key:sub(2)] = n
      end
    end
  end
  return out
end

return M
