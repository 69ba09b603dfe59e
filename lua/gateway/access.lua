-- The access phase of every request: request checks, then the decision cache, then (on a
-- miss) the sidecar, asked through nginx's control socket. Fails closed: whatever is not a
-- clear "yes" from the cache or the sidecar is refused.
local contract = require("gateway.contract")
local cache = require("gateway.cache")
local entry = require("gateway.entry")
local keying = require("gateway.keying")
local metrics = require("gateway.metrics")
local request_check = require("gateway.request_check")
local respond = require("gateway.respond")
local sidecar = require("gateway.sidecar_client")

local M = {}

local ALLOWED = request_check.set_of(contract.allowed_methods)
local ALLOW_HEADER = table.concat(contract.allowed_methods, ", ")
local MAX_HEADERS = 100
-- Only guards against nginx itself stalling: the sidecar's timeout is nginx's, on the socket.
local ASK_TIMEOUT_MS = 65000
local answers = contract.answers
-- This worker's counters (gateway.metrics flushes them): one field increment per request.
local counts = metrics.counts

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

local function identity_from(header)
  local identity = {
    row = header[CLIENT_ROW],
    client_id = header[IDENTITY.client_id],
    client_name = header[IDENTITY.client_name] or "",
    is_admin = header[IDENTITY.is_admin],
    method = header[IDENTITY.method],
  }
  -- A "yes" without who it is for is no "yes": refuse rather than pass an anonymous caller.
  if type(identity.row) ~= "string" or type(identity.client_id) ~= "string"
      or (identity.is_admin ~= "true" and identity.is_admin ~= "false")
      or type(identity.method) ~= "string" or type(identity.client_name) ~= "string" then
    return nil
  end
  return identity
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

local function check(admin)
  local version = ngx.req.http_version()
  if version == 0.9 then
    return refuse(answers.http_version_not_supported)
  end
  if not ALLOWED[ngx.req.get_method()] then
    return refuse(answers.method_not_allowed, { Allow = ALLOW_HEADER })
  end
  if version < 2 then
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

  local credential = ngx.var.http_authorization
  local max_age_ms = ngx.var[contract.max_age_variable]
  local key = nil
  -- Admin decisions are never reused: management is rare and must see every change at once.
  if not admin and credential and tonumber(max_age_ms) and tonumber(max_age_ms) > 0 then
    -- Every setting the decision depends on, joined by nginx: one variable read.
    key = keying.key(credential, ngx.var[contract.decision_inputs_variable] or "")
    local identity = cache.get(key)
    if identity then
      counts.cache_hit = counts.cache_hit + 1
      return use(identity)
    end
    counts.cache_miss = counts.cache_miss + 1
  end

  -- Taken before asking: a revocation that lands while the sidecar answers is newer than this.
  ngx.update_time()
  local asked_at = ngx.now()
  local res, err = sidecar.ask(ngx.var[contract.control_socket_variable], contract.auth_path,
    question(credential, admin), ASK_TIMEOUT_MS)
  if not res then
    ngx.log(ngx.ERR, "cannot ask the sidecar: ", err)
    return refuse(answers.auth_unavailable)
  end
  local status = res.status
  if status >= 200 and status < 300 then
    local identity = identity_from(res.header)
    if not identity then
      ngx.log(ngx.ERR, "the sidecar said yes without an identity; refused")
      return refuse(answers.auth_unavailable)
    end
    if key then
      -- The lifetime counts from now, when the entry is stored: with a token it then ends at
      -- exp exactly, however long the sidecar took.
      ngx.update_time()
      cache.put(key, identity, asked_at,
        entry.lifetime(max_age_ms, ngx.now(), res.header[VALID_UNTIL]))
    end
    return use(identity)
  end
  if status == 401 or status == 403 then
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
