-- The control endpoint (a unix socket only): the sidecar pushes revocations here.
local contract = require("gateway.contract")
local cache = require("gateway.cache")
local respond = require("gateway.respond")

local M = {}

local function require_post()
  if ngx.req.get_method() ~= "POST" then
    respond.json(405, contract.answers.method_not_allowed.body, { Allow = "POST" })
    return false
  end
  return true
end

-- Body: client row ids, comma-separated. Answers 204 once every marker is recorded.
function M.invalidate()
  if not require_post() then
    return
  end
  ngx.req.read_body()
  local body = ngx.req.get_body_data() or ""
  local count = 0
  for row in body:gmatch("[^,]+") do
    if not row:match("^%d+$") then
      return respond.json(400, contract.answers.bad_request.body)
    end
    cache.invalidate(row, contract.max_age_limit_s)
    count = count + 1
  end
  ngx.header["X-Invalidated"] = count
  return ngx.exit(204)
end

-- The refusals nginx decided itself since the last call (gateway.budget), for the sidecar to
-- add to its failure counts.
function M.failures()
  if not require_post() then
    return
  end
  respond.json_data(require("gateway.budget").drain_failures())
end

-- The requests counted per client in finished generations (gateway.usage), for the sidecar's
-- usage table.
function M.usage()
  if not require_post() then
    return
  end
  respond.json_data(require("gateway.usage").drain())
end

function M.invalidate_all()
  if not require_post() then
    return
  end
  cache.invalidate_all()
  return ngx.exit(204)
end

return M
