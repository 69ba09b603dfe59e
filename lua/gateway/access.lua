-- The access phase of every request: request checks, then what nginx can decide by itself (a
-- cached decision, an API key against its key record, a request without credentials), then
-- the failure budgets, then the sidecar, asked in one hop. Fails closed: whatever is not a
-- clear "yes" from memory or from the sidecar is refused (docs/decisions/20261125-miss-path.md).
local budget = require("gateway.budget")
local contract = require("gateway.contract")
local cache = require("gateway.cache")
local entry = require("gateway.entry")
local keying = require("gateway.keying")
local keys = require("gateway.keys")
local metrics = require("gateway.metrics")
local ratelimit = require("gateway.ratelimit")
local request_check = require("gateway.request_check")
local respond = require("gateway.respond")
local sha256 = require("gateway.sha256")
local sidecar = require("gateway.sidecar_client")
local sidecar_address = require("gateway.sidecar_address")
local sidecar_mux = require("gateway.sidecar_mux")
local usage = require("gateway.usage")

local M = {}

local ALLOWED = request_check.set_of(contract.allowed_methods)
local ALLOW_HEADER = table.concat(contract.allowed_methods, ", ")
-- ngx.req.http_version() of the versions served; anything else nginx parsed (HTTP/1.2, or nil
-- for a version it has no number for) is 505 like HTTP/0.9.
local HTTP1 = { [1.0] = true, [1.1] = true }
local MAX_HEADERS = contract.max_request_headers
-- Through the control socket nginx's own proxy_read_timeout answers first; this only guards
-- against nginx itself stalling.
local CONTROL_ASK_TIMEOUT_MS = 65000
local DEFAULT_ASK_TIMEOUT_MS = 3000
local answers = contract.answers
-- This worker's counters (gateway.metrics flushes them): one field increment per request.
local counts = metrics.counts
local var_names = contract.toggle_variables

local function refuse(answer, headers)
  metrics.refusal(answer.status)
  return respond.json(answer.status, answer.body, headers)
end

local function use(identity)
  local var = ngx.var
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

local function identity_from(header)
  local identity = {
    row = header[CLIENT_ROW],
    client_id = header[IDENTITY.client_id],
    client_name = header[IDENTITY.client_name] or "",
    is_admin = header[IDENTITY.is_admin],
    method = header[IDENTITY.method],
    limit = ratelimit.parse(header[RATE_LIMIT]),
  }
  -- A "yes" without who it is for is no "yes": refuse rather than pass an anonymous caller.
  if type(identity.row) ~= "string" or type(identity.client_id) ~= "string"
      or (identity.is_admin ~= "true" and identity.is_admin ~= "false")
      or type(identity.method) ~= "string" or type(identity.client_name) ~= "string" then
    return nil
  end
  return identity
end

-- The challenge of a refusal nginx words itself: the schemes that are on, as the sidecar says.
local function challenge()
  local api_keys = ngx.var[var_names.api_keys] == "true"
  local oidc = ngx.var[var_names.oidc] == "true"
  if api_keys and oidc then
    return "apk, Bearer"
  end
  return oidc and "Bearer" or "apk"
end

-- The sidecar's refusal, relayed: its status, JSON body and challenge headers.
local function relay_refusal(res)
  local headers = {}
  for _, name in ipairs(contract.refusal_headers) do
    local value = res.header[lower(name)]
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
local function too_many(wait, row)
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

-- What the sidecar is told: the caller's credential, nginx's settings and nginx's request id,
-- nothing else of the caller's request (so no caller-supplied header can pose as a setting).
local function question(credential, admin)
  local headers = {}
  local forwarded = contract.forwarded
  for i = 1, #forwarded do
    local value = ngx.var[forwarded[i][2]]
    -- An empty setting is not sent: the sidecar reads absence as the setting's default.
    if value and value ~= "" then
      headers[#headers + 1] = { forwarded[i][1], value }
    end
  end
  if credential then
    headers[#headers + 1] = { "Authorization", credential }
  end
  if admin then
    headers[#headers + 1] = { contract.require_admin_header, "true" }
  end
  return headers
end

-- The same question as an auth frame (the one hop). nginx's settings are the same on nearly
-- every request: their lines are built and checked once per worker for each set of values,
-- leaving the request's own values (method, URI, request id, credential) to each question.
local REQUEST_OWN = { request_method = true, request_uri = true, [contract.request_id_variable] = true }
local SETTINGS, OWN = {}, {}
for _, row in ipairs(contract.forwarded) do
  local list = REQUEST_OWN[row[2]] and OWN or SETTINGS
  list[#list + 1] = row
end
local ADMIN_LINE = contract.require_admin_header .. ": true\n"
local setting_values = {}
local prefixes, prefix_count, MAX_PREFIXES = {}, 0, 64

local function frame_prefix(var)
  for i = 1, #SETTINGS do
    setting_values[i] = var[SETTINGS[i][2]] or ""
  end
  local key = table.concat(setting_values, "\n", 1, #SETTINGS)
  local prefix = prefixes[key]
  if prefix then
    return prefix
  end
  local headers = {}
  for i = 1, #SETTINGS do
    -- An empty setting is not sent: the sidecar reads absence as the setting's default.
    if setting_values[i] ~= "" then
      headers[#headers + 1] = { SETTINGS[i][1], setting_values[i] }
    end
  end
  local lines, why = sidecar.frame_lines(headers)
  if not lines then
    return nil, why
  end
  if prefix_count >= MAX_PREFIXES then
    prefixes, prefix_count = {}, 0
  end
  prefix = lines
  prefixes[key] = prefix
  prefix_count = prefix_count + 1
  return prefix
end

local find = string.find
local re_find = ngx.re.find

-- Whether `value` can stay one line of a frame: no CR, LF or NUL. nginx lets none through in
-- any value asked about; this fails closed all the same.
local function one_line(value)
  return not find(value, "\n", 1, true) and not re_find(value, "[\\r\\x00]", "jo")
end

-- The question as the pieces of a frame, not one string: the socket writes them as they are.
-- Joined, every question would be a new long string that differs from the others only in the
-- request id, and LuaJIT's string hash (a few sampled bytes) puts all of those in one chain,
-- compared byte by byte whenever another is made (8 % of nginx's time with the cache off).
local function frame_question(credential, admin)
  local var = ngx.var
  local prefix, why = frame_prefix(var)
  if not prefix then
    return nil, why
  end
  -- The magic, a place for the number the shared connection gives the question (empty: none;
  -- sidecar_mux.lua), the settings' lines, then the request's own.
  local parts = { sidecar.FRAME_MAGIC, "", prefix }
  local n = 3
  for i = 1, #OWN do
    local value = var[OWN[i][2]]
    if value and value ~= "" then
      if not one_line(value) then
        return nil, "unsafe request value"
      end
      parts[n + 1], parts[n + 2], parts[n + 3], parts[n + 4] = OWN[i][1], ": ", value, "\n"
      n = n + 4
    end
  end
  if credential then
    if not one_line(credential) then
      return nil, "unsafe credential"
    end
    parts[n + 1], parts[n + 2], parts[n + 3] = "Authorization: ", credential, "\n"
    n = n + 3
  end
  if admin then
    parts[n + 1] = ADMIN_LINE
    n = n + 1
  end
  parts[n + 1] = "\n"
  return parts
end

-- Where to ask and how long to wait: one hop to the sidecar's own socket when nginx knows it
-- (true: in an auth frame), else through the control socket (HTTP).
local function sidecar_target()
  local var = ngx.var
  local configured = var[contract.sidecar_variable]
  local direct = configured and configured ~= "" and sidecar_address.direct(configured)
  if direct then
    return direct, tonumber(var[contract.auth_timeout_variable]) or DEFAULT_ASK_TIMEOUT_MS, true
  end
  return var[contract.control_socket_variable], CONTROL_ASK_TIMEOUT_MS, false
end

-- The question in the shape its route takes: a frame, or HTTP headers.
local function question_for(direct, credential, admin)
  if direct then
    return frame_question(credential, admin)
  end
  return question(credential, admin)
end

local function ask_at(address, timeout, direct, q)
  if direct then
    return sidecar_mux.ask(address, q, timeout)
  end
  return sidecar.ask(address, contract.auth_path, q, timeout)
end

local function ask(credential, admin)
  local address, timeout, direct = sidecar_target()
  local q, why = question_for(direct, credential, admin)
  if not q then
    return nil, why
  end
  return ask_at(address, timeout, direct, q)
end

-- Keeps the record of `key_id` from the sidecar's answer `res` to a question asked at
-- `asked_at`, for the lifetime the settings give (an unknown id's at most
-- keys.UNKNOWN_LIFETIME_S).
-- Returns the record, or nil when the answer carries none.
local function learn(key_id, res, asked_at, max_age_ms)
  local status = res.status
  if status ~= 401 and (status < 200 or status >= 300) then
    return nil
  end
  local rec = keys.from_answer(res.header, key_id)
  if rec then
    local lifetime = max_age_ms / 1000
    if rec.kind == "unknown" then
      lifetime = math.min(lifetime, keys.UNKNOWN_LIFETIME_S)
    end
    keys.put(key_id, rec, asked_at, lifetime)
  end
  return rec
end

-- A record in use is learnt again in the background once half its lifetime is gone, so a key
-- in steady use never meets a miss, and an attacked id whose budget is spent never loses the
-- record its owner passes by. One refresh per id at a time, across workers; the question is
-- the one the caller's request would ask (its credential was just found right).
local REFRESH_CLAIM_S = 5

-- The timer's side of a refresh. A function of its own, not a closure: a closure made on the
-- hit path (bytecode FNEW) stops LuaJIT from compiling the path at all.
local function refresh_now(premature, key_id, address, timeout, direct, q, max_age_ms)
  if premature then
    return
  end
  ngx.update_time()
  local asked_at = ngx.now()
  local res, why = ask_at(address, timeout, direct, q)
  if res then
    learn(key_id, res, asked_at, max_age_ms)
  else
    ngx.log(ngx.WARN, "cannot refresh a key record: ", why)
  end
end

local function refresh(key_id, credential, max_age_ms)
  if not keys.claim_refresh(key_id, REFRESH_CLAIM_S) then
    return
  end
  local address, timeout, direct = sidecar_target()
  local q = question_for(direct, credential, false)
  if not q then
    return
  end
  local ok, err = ngx.timer.at(0, refresh_now, key_id, address, timeout, direct, q, max_age_ms)
  if not ok then
    ngx.log(ngx.WARN, "cannot start a key record refresh: ", err)
  end
end

-- `apk <id>.<secret>` in the only shape a key is issued in (an id that is a safe integer, a
-- 43-character base64url secret) -> id, secret. Anything else is the sidecar's to judge (it
-- says why it is malformed). PCRE, compiled once: a Lua pattern with captures cost 2 µs.
local API_KEY = [[^[Aa][Pp][Kk] +([1-9][0-9]{0,14})\.([A-Za-z0-9_-]{43})\z]]
local captures = {}
function M.parse_api_key(credential)
  if not ngx.re.match(credential, API_KEY, "jo", nil, captures) then
    return nil
  end
  return captures[1], captures[2]
end

-- Whether a refusal's verdict is a guess: only guesses spend budgets and meet them. The right
-- secret of an expired client and a rotated-out one past its grace are refused alike, always
-- with 401, as their holder may ask again and again.
local GUESS = { wrong = true, unknown = true }

-- A key record's refusal: wrong secret or unknown id (spends the budgets; 429 past them), a
-- stale secret, or the right secret of an expired client.
local function refuse_by_record(verdict, id)
  if GUESS[verdict] then
    local wait = budget.exhausted(id)
    if wait then
      return too_many(wait, verdict ~= "unknown" and id or nil)
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

local function check(admin)
  local version = ngx.req.http_version()
  local http1 = HTTP1[version]
  if not http1 and version ~= 2.0 then
    return refuse(answers.http_version_not_supported)
  end
  if not ALLOWED[ngx.req.get_method()] then
    return refuse(answers.method_not_allowed, { Allow = ALLOW_HEADER })
  end
  if http1 then
    -- HTTP/1: a few scans of the raw header block, no table of the headers.
    local problem = request_check.raw_header_problem(ngx.req.raw_header(true), MAX_HEADERS)
    if problem == "control" then
      return refuse(answers.bad_header)
    elseif problem == "line" then
      return refuse(answers.bad_header_line)
    elseif problem == "many" then
      return refuse(answers.too_many_headers)
    end
  else
    -- HTTP/2 sends header names as HPACK strings, not lines: check the values nginx decoded.
    local headers, truncated = ngx.req.get_headers(MAX_HEADERS, true)
    if truncated then
      return refuse(answers.too_many_headers)
    end
    if request_check.has_control_bytes(headers) then
      return refuse(answers.bad_header)
    end
  end

  local var = ngx.var
  local credential = var.http_authorization
  if not credential then
    -- Nothing to verify: refused here, without asking, while a method is on (with none on,
    -- the sidecar says so).
    if var[var_names.api_keys] == "true" or var[var_names.oidc] == "true" then
      budget.count_failure(answers.missing_credentials.code, nil)
      return refuse(answers.missing_credentials, { ["WWW-Authenticate"] = challenge() })
    end
  end

  local max_age_ms = tonumber(var[contract.max_age_variable]) or 0
  local remember = credential ~= nil and max_age_ms > 0
  -- An API key in the issued shape names the key id the budgets count against, cache or not.
  local key_id, secret = nil, nil
  if credential and var[var_names.api_keys] == "true" then
    key_id, secret = M.parse_api_key(credential)
  end
  local cache_key = nil
  local right_secret = false
  if key_id and remember then
    local rec = keys.get(key_id)
    if rec then
      local verdict = keys.verdict(rec, sha256.digest(secret), ngx.now())
      if verdict ~= "pass" then
        return refuse_by_record(verdict, key_id)
      end
      -- Admin decisions are never reused: management asks every time, a refusal above aside.
      if not admin then
        counts.key_hit = counts.key_hit + 1
        -- Past half its life, asked at most once a second per worker (this worker's decoded
        -- copy keeps its age until it expires, whoever refreshed the shared one).
        local now = ngx.now()
        if now - rec.learnt_at >= max_age_ms / 2000 and now >= (rec.refresh_checked or 0) then
          rec.refresh_checked = now + 1
          refresh(key_id, credential, max_age_ms)
        end
        return use(rec.identity)
      end
      right_secret = true
    end
  end
  -- A credential without a key record (a token; an API key before its record is learnt, or
  -- from a sidecar that sends none) may have a cached decision.
  if remember and not admin and not right_secret then
    -- Every setting the decision depends on, joined by nginx: one variable read.
    cache_key = keying.key(credential, var[contract.decision_inputs_variable] or "")
    local identity = cache.get(cache_key)
    if identity then
      counts.cache_hit = counts.cache_hit + 1
      return use(identity)
    end
    counts.cache_miss = counts.cache_miss + 1
  end

  -- Nothing in memory decides it. Past a budget, answer without asking (a secret known to be
  -- right is never refused by one); an attacked key id still gets one question a second, so
  -- its record comes back once it expires.
  if not right_secret then
    local wait, spent = budget.exhausted(key_id)
    if wait and not (spent == "key" and budget.refill_slot(key_id)) then
      return too_many(wait, nil)
    end
  end

  -- Taken before asking: a revocation that lands while the sidecar answers is newer than this.
  ngx.update_time()
  local asked_at = ngx.now()
  local res, err = ask(credential, admin)
  if not res then
    ngx.log(ngx.ERR, "cannot ask the sidecar: ", err)
    return refuse(answers.auth_unavailable)
  end
  local status = res.status
  local learnt = nil
  if key_id and remember then
    learnt = learn(key_id, res, asked_at, max_age_ms)
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
        entry.lifetime(max_age_ms, asked_at, res.header[VALID_UNTIL]))
    end
    return use(identity)
  end
  if status == 401 then
    -- A guess spends the budgets; the holder of a real (expired or rotated-out) secret does not.
    local verdict = key_id and secret and learnt and keys.verdict(learnt, sha256.digest(secret), ngx.now())
    if not verdict or GUESS[verdict] then
      budget.spend(key_id, true)
    end
    return relay_refusal(res)
  end
  if status == 403 then
    return relay_refusal(res)
  end
  -- Sidecar down, frozen (timeout), or answering nonsense: fail closed, and say which.
  ngx.log(ngx.ERR, "the sidecar answered ", status, "; refused as unavailable")
  return refuse(answers.auth_unavailable)
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
