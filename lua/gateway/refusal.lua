-- How nginx refuses a request itself: its own answers (counted by status), the sidecar's
-- relayed, 429 past a failure budget (after a pause), and a key record's refusals.
local budget = require("gateway.budget")
local contract = require("gateway.contract")
local metrics = require("gateway.metrics")
local respond = require("gateway.respond")

local M = {}

local answers = contract.answers
-- This worker's counters (gateway.metrics flushes them): one field increment per request.
local counts = metrics.counts
local var_names = contract.toggle_variables

-- One of nginx's own answers (contract.answers), with the given extra headers.
function M.refuse(answer, headers)
  metrics.refusal(answer.status)
  return respond.json(answer.status, answer.body, headers)
end
local refuse = M.refuse

-- The challenge of a refusal nginx words itself: the schemes that are on, as the sidecar says.
local function challenge()
  local api_keys = ngx.var[var_names.api_keys] == "true"
  local oidc = ngx.var[var_names.oidc] == "true"
  if api_keys and oidc then
    return "apk, Bearer"
  end
  return oidc and "Bearer" or "apk"
end

-- No credential to verify, while a method is on: refused here, without asking.
function M.missing_credentials()
  budget.count_failure(answers.missing_credentials.code, nil)
  return refuse(answers.missing_credentials, { ["WWW-Authenticate"] = challenge() })
end

-- An id the complete key table does not hold (gateway.key_table): no client has it. Refused as
-- cheaply as a request without a credential: no budget spent (nobody is asked, so a flood of
-- random ids costs nothing a budget would save), counted as a failure under no client, as the
-- sidecar counts a guessed id.
function M.nobody()
  counts.key_refused = counts.key_refused + 1
  budget.count_failure(answers.invalid_api_key.code, nil)
  return refuse(answers.invalid_api_key, { ["WWW-Authenticate"] = challenge() })
end

-- The sidecar's refusal, relayed: its status, JSON body and challenge headers.
function M.relay(res)
  local headers = {}
  for _, name in ipairs(contract.refusal_headers) do
    local value = res.header[name:lower()]
    if type(value) == "string" then
      headers[name] = value
    end
  end
  local body = res.body
  if type(body) ~= "string" or body:sub(1, 1) ~= "{" then
    body = (res.status == 403 and answers.forbidden or answers.unauthorized).body
  end
  metrics.refusal(res.status)
  return respond.json(res.status, body, headers)
end

-- A request the client's permissions do not allow (gateway.permissions): 403, or 400 for a path
-- that could reach the application as another path. The message names the client whose rules
-- refused (its row: digits) and why, never the path the caller sent. Counted as a failure of
-- that client (auth-failures); no budget is spent: the credential was right.
local cjson = require("cjson.safe")

local function about_client(answer, row, detail)
  local who = type(row) == "string" and row:find("^%d+$") and ("API client " .. row) or "The client"
  local message = who .. ": " .. answer.message .. (detail and (" (" .. detail .. ")") or "")
  return cjson.encode({ errors = { { code = answer.code, message = message } } })
end

function M.permission_denied(row)
  counts.permission_refused = counts.permission_refused + 1
  local answer = answers.permission_denied
  budget.count_failure(answer.code, row)
  metrics.refusal(answer.status)
  return respond.json(answer.status, about_client(answer, row))
end

function M.ambiguous_path(row, why)
  counts.ambiguous_path_refused = counts.ambiguous_path_refused + 1
  local answer = answers.ambiguous_path
  budget.count_failure(answer.code, row)
  metrics.refusal(answer.status)
  return respond.json(answer.status, about_client(answer, row, why))
end

-- A 429 is answered after a pause: whoever is past a budget is a flood or a client stuck in a
-- loop, and each of its connections then costs nginx one answer a second instead of as many as
-- it can send (a flood answered at once takes nginx's CPU from paying callers). The pause
-- holds only a timer and the request's memory; past TARPIT_MAX paused requests in this worker
-- the answer is immediate.
local TARPIT_S = 1
local TARPIT_MAX = 512
local paused = 0

-- 429 past a budget; counted as a failure against `row` (the claimed client, when it is
-- known to exist), like the refusals it replaces.
function M.too_many(wait, row)
  counts.budget_refused = counts.budget_refused + 1
  budget.count_failure(contract.answers.too_many_failures.code, row)
  if paused < TARPIT_MAX then
    local pause = math.min(TARPIT_S, wait)
    paused = paused + 1
    ngx.sleep(pause)
    paused = paused - 1
    wait = math.max(1, wait - pause)
  end
  return refuse(answers.too_many_failures, { ["Retry-After"] = wait })
end

-- Whether a refusal's verdict is a guess: only guesses spend budgets and meet them. The right
-- secret of an expired client and a rotated-out one past its grace are refused alike, always
-- with 401, as their holder may ask again and again.
local GUESS = { wrong = true, unknown = true }
M.GUESS = GUESS

-- A key record's refusal: wrong secret or unknown id (spends the budgets; 429 past them), a
-- stale secret, or the right secret of an expired client.
function M.by_record(verdict, id)
  if GUESS[verdict] then
    local wait = budget.exhausted(id)
    if wait then
      return M.too_many(wait, verdict ~= "unknown" and id or nil)
    end
    budget.spend(id, false)
  end
  counts.key_refused = counts.key_refused + 1
  local headers = { ["WWW-Authenticate"] = challenge() }
  if verdict == "expired" then
    budget.count_failure(answers.api_client_expired.code, id)
    return refuse(answers.api_client_expired, headers)
  end
  -- A guessed id is counted under no client, as the sidecar counts it.
  budget.count_failure(answers.invalid_api_key.code, verdict ~= "unknown" and id or nil)
  return refuse(answers.invalid_api_key, headers)
end

return M
