-- The control endpoint (a unix socket only): the sidecar pushes revocations here.
local contract = require("gateway.contract")
local cache = require("gateway.cache")
local key_records = require("gateway.key_records")
local budget = require("gateway.budget")
local respond = require("gateway.respond")

local M = {}

local function require_post()
  if ngx.req.get_method() ~= "POST" then
    respond.json(405, contract.answers.method_not_allowed.body, { Allow = "POST" })
    return false
  end
  return true
end

-- Body: client row ids, comma-separated; `mark(row)` for each once all are checked. Answers
-- 204 once every marker is recorded, 400 (and records none) for a body that is not ids.
local function each_row(mark)
  if not require_post() then
    return
  end
  ngx.req.read_body()
  local rows = {}
  for row in (ngx.req.get_body_data() or ""):gmatch("[^,]+") do
    if not row:match("^%d+$") then
      return respond.json(400, contract.answers.bad_request.body)
    end
    rows[#rows + 1] = row
  end
  for _, row in ipairs(rows) do
    mark(row)
  end
  ngx.header["X-Invalidated"] = #rows
  return ngx.exit(204)
end

local function invalidate_row(row)
  cache.invalidate(row, contract.max_age_limit_s)
end

local function created_row(row)
  cache.created(row, key_records.UNKNOWN_LIFETIME_S, contract.max_age_limit_s)
  budget.forgive(row)
end

-- Changed or deleted clients: everything learnt about them is dead.
function M.invalidate()
  return each_row(invalidate_row)
end

-- New clients: only "no client has this id" is dead; what was learnt since about the new client
-- (its key record, its decisions) stays, so its first callers are not sent back to the sidecar.
-- The id's failure budget starts again: guesses before the client existed were at nothing.
function M.created()
  return each_row(created_row)
end

-- The refusals nginx decided itself since the last call (gateway.budget), for the sidecar to
-- add to its failure counts.
function M.failures()
  if not require_post() then
    return
  end
  respond.json_data(budget.drain_failures())
end

-- The requests counted per client in finished generations (gateway.usage), for the sidecar's
-- usage table.
function M.usage()
  if not require_post() then
    return
  end
  respond.text_data(require("gateway.usage").drain())
end

-- The rate limit windows' counts, with the fleet's added (gateway.fleet; rate_limits.store
-- redis): the body's deltas applied, then ?closed=<s> sets or ?closed=0 clears the store's
-- flag (after the counts: nginx never admits on a window the fleet's counts are not in yet),
-- every window's count answered unless ?list=0. 400 (and nothing applied) for a closed= that
-- is not whole seconds; 503 when the flag could not be set (the sidecar sets it again).
function M.limits()
  if not require_post() then
    return
  end
  local fleet = require("gateway.fleet")
  local closed = ngx.var.arg_closed
  local seconds = closed and fleet.parse_closed(closed)
  if closed and not seconds then
    return respond.json(400, contract.answers.bad_request.body)
  end
  ngx.req.read_body()
  local text = fleet.exchange(ngx.req.get_body_data(), ngx.var.arg_list ~= "0")
  if seconds and not fleet.set_closed(seconds) then
    return respond.json(503, contract.answers.rate_limit_store_unreachable.body)
  end
  respond.text_data(text)
end

-- The key table's replica (gateway.key_table): GET its state (?ids=1,2,3: the records held for
-- those ids, base64, false for one not held); POST ?op=load&position=P (a new
-- load from feed position P), ?op=apply[&position=P][&complete=1][&renew=1][&live=S] with lines
-- of records (gateway.key_table.parse_line; renew and live: gateway.key_table.apply), ?op=drop. 409 for an apply with no load under way or done
-- (nginx restarted: the sidecar loads it again), 400 for anything malformed.
local POSITION = "^[0-9a-f]+:%d+$"
local MAX_READ = 1000
local NO_KEY_TABLE = '{"errors":[{"code":"NOT_FOUND","message":"This nginx holds no key table."}]}'

function M.key_table()
  local key_table = require("gateway.key_table")
  if not key_table.enabled then
    -- A default.conf whose key table was taken out by hand: the sidecar then loads nothing.
    return respond.json(404, NO_KEY_TABLE)
  end
  local method = ngx.req.get_method()
  if method == "GET" then
    local ids = ngx.var.arg_ids
    if ids == nil then
      return respond.json_data(key_table.state())
    end
    -- ?ids=1,2,3 (at most MAX_READ of them): the records held for those ids.
    local list = {}
    for id in ids:gmatch("[^,]+") do
      if not id:find("^[1-9]%d*$") or #id > 15 or #list >= MAX_READ then
        return respond.json(400, contract.answers.bad_request.body)
      end
      list[#list + 1] = id
    end
    return respond.json_data({ records = key_table.records(list) })
  end
  if method ~= "POST" then
    return respond.json(405, contract.answers.method_not_allowed.body, { Allow = "GET, POST" })
  end
  local args = ngx.req.get_uri_args(10)
  local op, position = args.op, args.position
  if position ~= nil and (type(position) ~= "string" or not position:find(POSITION)) then
    return respond.json(400, contract.answers.bad_request.body)
  end
  if op == "load" and position then
    key_table.load(position)
    return respond.json_data(key_table.state())
  elseif op == "drop" then
    key_table.drop()
    return ngx.exit(204)
  elseif op ~= "apply" then
    return respond.json(400, contract.answers.bad_request.body)
  end
  ngx.req.read_body()
  local body = ngx.req.get_body_data()
  if body == nil and ngx.req.get_body_file() then
    -- Larger than the location's buffer: refused rather than half applied.
    return respond.json(413, contract.answers.bad_request.body)
  end
  local trust_s = tonumber(ngx.var[contract.key_table.trust_variable]) or 0
  local live_s = nil
  if args.live ~= nil then
    live_s = type(args.live) == "string" and args.live:find("^%d+%.?%d*$") and tonumber(args.live)
    if not live_s then
      return respond.json(400, contract.answers.bad_request.body)
    end
  end
  local state, why =
    key_table.apply(body, position, args.complete == "1", trust_s, args.renew == "1", live_s)
  if not state then
    if why == "empty" then
      ngx.status = 409
      return respond.json_data({ phase = "empty" })
    end
    return respond.json(400, contract.answers.bad_request.body)
  end
  return respond.json_data(state)
end

function M.invalidate_all()
  if not require_post() then
    return
  end
  cache.invalidate_all()
  return ngx.exit(204)
end

return M
