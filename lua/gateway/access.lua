-- The access phase of every request: request checks, then what nginx can decide by itself (a
-- cached decision, an API key against its key record, a request without credentials), then
-- the failure budgets, then the sidecar, asked in one hop. Fails closed: whatever is not a
-- clear "yes" from memory or from the sidecar is refused (docs/decisions/20261125-miss-path.md).
-- The flow; how nginx refuses is gateway.refusal's, how the sidecar is asked
-- gateway.sidecar.ask's, what an API key looks like gateway.credentials'.
local budget = require("gateway.budget")
local contract = require("gateway.contract")
local cache = require("gateway.cache")
local credentials = require("gateway.credentials")
local decision_entry = require("gateway.decision_entry")
local decision_key = require("gateway.decision_key")
local key_records = require("gateway.key_records")
local key_table = require("gateway.key_table")
local metrics = require("gateway.metrics")
local permissions = require("gateway.permissions")
local ratelimit = require("gateway.ratelimit")
local refusal = require("gateway.refusal")
local request_check = require("gateway.request_check")
local sha256 = require("gateway.sha256")
local sidecar = require("gateway.sidecar.ask")
local usage = require("gateway.usage")

local M = {}

local find = string.find
local answers = contract.answers
-- This worker's counters (gateway.metrics flushes them): one field increment per request.
local counts = metrics.counts
local var_names = contract.toggle_variables
local refuse, relay_refusal, too_many = refusal.refuse, refusal.relay, refusal.too_many
local GUESS = refusal.GUESS
local parse_api_key = credentials.parse_api_key

local function use(identity)
  local var = ngx.var
  -- A restricted client first: its rules decide before anything is counted as allowed
  -- (docs/decisions/20261128-permissions.md). A client without rules costs one field read.
  local perms = identity.permissions
  if perms then
    local method = ngx.req.get_method()
    local refused, why = permissions.judge(perms, method, var.request, var.request_uri)
    if refused == "denied" then
      return refusal.permission_denied(identity.row)
    elseif refused then
      return refusal.ambiguous_path(identity.row, permissions.why(why))
    end
  end
  local v = contract.identity_variables
  var[v.client_id] = identity.client_id
  var[v.client_name] = identity.client_name
  var[v.is_admin] = identity.is_admin
  var[v.method] = identity.method
  -- The client's rate limit, when it has one (gateway.ratelimit counts it, or answers 429);
  -- without one, its request is counted for its usage, nothing else.
  local limit = identity.limit
  if limit then
    return ratelimit.admit(identity.row, limit)
  end
  local allowed = usage.allowed
  allowed[identity.row] = (allowed[identity.row] or 0) + 1
end

local function lower(name)
  return name:lower()
end

-- Response header names as the client stores them (lower case), computed once.
local IDENTITY = {}
for role, name in pairs(contract.identity_headers) do
  IDENTITY[role] = lower(name)
end
local CLIENT_ROW = lower(contract.decision.client_row)
local VALID_UNTIL = lower(contract.decision.valid_until)
local RATE_LIMIT = lower(contract.decision.rate_limit)
local PERMISSIONS = lower(contract.decision.permissions)

local function identity_from(header)
  local identity = {
    row = header[CLIENT_ROW],
    client_id = header[IDENTITY.client_id],
    client_name = header[IDENTITY.client_name] or "",
    is_admin = header[IDENTITY.is_admin],
    method = header[IDENTITY.method],
    limit = ratelimit.parse(header[RATE_LIMIT]),
    permissions = permissions.parse(header[PERMISSIONS]),
  }
  -- A "yes" without who it is for is no "yes": refuse rather than pass an anonymous caller.
  -- Rules that do not parse are no rules to pass on: refused the same way, never "everything".
  if identity.permissions == false
      or type(identity.row) ~= "string" or type(identity.client_id) ~= "string"
      or (identity.is_admin ~= "true" and identity.is_admin ~= "false")
      or type(identity.method) ~= "string" or type(identity.client_name) ~= "string" then
    return nil
  end
  return identity
end

-- Step 2, deciding from memory: a request without a credential, an API key against its key
-- record, a cached decision. Returns true when it answered (a refusal, or a "yes" used); else
-- the key a "yes" from the sidecar is to be cached under (nil: none) and whether the secret is
-- known to be right.
-- An API key against its key record, held in the key table (`held`) or learnt from an answer:
-- refused, passed, or (management) known to be right. from_memory's results.
local function from_record(admin, credential, key_id, secret, max_age_ms, rec, held)
  local now = ngx.now()
  local verdict = key_records.verdict(rec, sha256.digest(secret), now)
  if verdict ~= "pass" then
    refusal.by_record(verdict, key_id)
    return true
  end
  -- Admin decisions are never reused: management asks every time, a refusal above aside.
  if admin then
    return false, nil, true
  end
  counts.key_hit = counts.key_hit + 1
  -- A learnt record past half its life, asked at most once a second per worker (this worker's
  -- decoded copy keeps its age until it expires, whoever refreshed the shared one). A held
  -- record has no life: the feed keeps it current.
  if not held and now - rec.learnt_at >= max_age_ms / 2000
      and now >= (rec.refresh_checked or 0) then
    rec.refresh_checked = now + 1
    sidecar.refresh(key_id, credential, max_age_ms)
  end
  use(rec.identity)
  return true
end

local function from_memory(admin, credential, key_id, secret, max_age_ms)
  local var = ngx.var
  if not credential then
    -- Nothing to verify: refused here, without asking, while a method is on (with none on,
    -- the sidecar says so).
    if var[var_names.api_keys] == "true" or var[var_names.oidc] == "true" then
      refusal.missing_credentials()
      return true
    end
    return false, nil, false
  end
  local replica_trusted = false
  if key_id then
    -- The key table's replica first: while it is trusted it holds every client, and while the
    -- feed is live an id it does not hold is nobody's (docs/decisions/20261127-key-table-replica.md).
    local rec, nobody, trusted = key_table.lookup(key_id, ngx.now())
    replica_trusted = trusted
    -- A deleted client's record: its id is nobody's for as long as the replica is trusted.
    if rec and rec.kind == "unknown" then
      refusal.nobody()
      return true
    end
    if rec then
      return from_record(admin, credential, key_id, secret, max_age_ms, rec, true)
    end
    if nobody then
      refusal.nobody()
      return true
    end
  end
  if max_age_ms <= 0 then
    return false, nil, false
  end
  if key_id then
    local rec = key_records.get(key_id)
    -- An id learnt unknown is asked about again while a trusted replica cannot tell: the client
    -- may have been created since, its notice not here yet (missed, or on its way); the replica
    -- is the one to say "nobody's" (docs/decisions/20261202-ids-ahead-of-their-notice.md).
    if rec and not (replica_trusted and rec.kind == "unknown") then
      return from_record(admin, credential, key_id, secret, max_age_ms, rec, false)
    end
  end
  if admin then
    return false, nil, false
  end
  -- A credential without a key record (a token; an API key before its record is learnt, or
  -- from a sidecar that sends none) may have a cached decision.
  -- Every setting the decision depends on, joined by nginx: one variable read.
  local cache_key = decision_key.key(credential, var[contract.decision_inputs_variable] or "")
  local identity = cache.get(cache_key)
  if identity then
    counts.cache_hit = counts.cache_hit + 1
    use(identity)
    return true
  end
  counts.cache_miss = counts.cache_miss + 1
  return false, cache_key, false
end

-- Step 3, asking the sidecar, when nothing in memory decides: its answer is used, relayed or
-- kept (a key record; a "yes" under `cache_key`).
local function from_sidecar(admin, credential, key_id, secret, max_age_ms, cache_key,
                             right_secret)
  -- Past a budget, answer without asking (a secret known to be right is never refused by
  -- one); an attacked key id still gets one question a second, so its record comes back once
  -- it expires.
  if not right_secret then
    local wait, spent = budget.exhausted(key_id)
    if wait and not (spent == "key" and budget.refill_slot(key_id)) then
      return too_many(wait, nil)
    end
  end

  -- Taken before asking: a revocation that lands while the sidecar answers is newer than this.
  ngx.update_time()
  local asked_at = ngx.now()
  local res, err = sidecar.ask(credential, admin)
  if not res then
    ngx.log(ngx.ERR, "cannot ask the sidecar: ", err)
    return refuse(answers.auth_unavailable)
  end
  local status = res.status
  local learnt = nil
  if key_id and max_age_ms > 0 then
    learnt = key_records.learn(key_id, res, asked_at, max_age_ms)
  end
  if status >= 200 and status < 300 then
    local identity = identity_from(res.header)
    if not identity then
      ngx.log(ngx.ERR, "the sidecar said yes without an identity; refused")
      return refuse(answers.auth_unavailable)
    end
    if cache_key and not learnt then
      -- The lifetime counts from the question (gateway.cache.keep): the entry ends at
      -- max_age_ms after it, or at a token's exp, whichever comes first.
      ngx.update_time()
      cache.put(cache_key, identity, asked_at,
        decision_entry.lifetime(max_age_ms, asked_at, res.header[VALID_UNTIL]))
    end
    return use(identity)
  end
  if status == 401 then
    -- A guess spends the budgets; the holder of a real (expired or rotated-out) secret does not.
    local verdict = key_id and secret and learnt and key_records.verdict(learnt, sha256.digest(secret), ngx.now())
    if not verdict or GUESS[verdict] then
      budget.spend(key_id, true)
    end
    return relay_refusal(res)
  end
  if status == 403 and res.body and find(res.body, contract.proof.code, 1, true) then
    -- The sidecar did not take nginx's proof (a missing, malformed or rotated proof file): the
    -- caller's request was never judged, so it is unavailable, not forbidden.
    ngx.log(ngx.ERR, "the sidecar refused nginx's proof (", contract.proof.file,
      "); refused as unavailable")
    return refuse(answers.auth_unavailable)
  end
  if status == 403 then
    return relay_refusal(res)
  end
  -- Sidecar down, frozen (timeout), or answering nonsense: fail closed, and say which.
  ngx.log(ngx.ERR, "the sidecar answered ", status, "; refused as unavailable")
  return refuse(answers.auth_unavailable)
end

-- Whether the nginx module, which ran before this code, found the request's API key id to be
-- nobody's in the trusted, live key table (as gateway.key_table's lookup would say), having
-- screened the request as gateway.request_check does or stricter. Asked first: such a request is
-- refused without reading its credential or header block, so a flood of guessed ids makes no
-- Lua string of their bytes (interning each was most of what such a refusal cost over one
-- without a credential: docs/decisions/20261129-guessed-ids-in-c.md). Without the module: never.
local told_nobody
do
  local name = contract.module_nobody_teller
  local teller = require("gateway.module_functions").find("int " .. name .. "(void *r);", name)
  local get_request = teller and require("resty.core.base").get_request
  told_nobody = function()
    if not teller then
      return false
    end
    local r = get_request()
    return r ~= nil and teller(r) == 1
  end
end

-- The flow: step 1, the request's own checks (gateway.request_check); then memory, then the
-- sidecar.
local function check(admin)
  if told_nobody() then
    counts.module_nobody = counts.module_nobody + 1
    return refusal.nobody()
  end
  local answer, headers = request_check.refusal()
  if answer then
    return refuse(answer, headers)
  end
  local var = ngx.var
  local credential = var.http_authorization
  local max_age_ms = tonumber(var[contract.max_age_variable]) or 0
  -- An API key in the issued shape names the key id the budgets count against, cache or not.
  local key_id, secret = nil, nil
  if credential and var[var_names.api_keys] == "true" then
    key_id, secret = parse_api_key(credential)
  end
  local decided, cache_key, right_secret =
    from_memory(admin, credential, key_id, secret, max_age_ms)
  if decided then
    return
  end
  return from_sidecar(admin, credential, key_id, secret, max_age_ms, cache_key, right_secret)
end

-- Every location but management: any valid credential.
function M.caller()
  return check(false)
end

-- Management: an admin credential, asked every time.
function M.admin()
  return check(true)
end

return M
