-- Asking the sidecar from the access phase: where (its own socket, one hop, or the control
-- socket), in which shape (an auth frame, or HTTP headers), and the background refresh of key
-- records. The transports: gateway.sidecar.mux (the worker's shared link, which falls back to
-- gateway.sidecar.direct), gateway.sidecar.http; the frame's bytes: gateway.sidecar.auth_frame.
local contract = require("gateway.contract")
local frame_codec = require("gateway.sidecar.auth_frame")
local http = require("gateway.sidecar.http")
local key_records = require("gateway.key_records")
local proof = require("gateway.proof")
local sidecar_address = require("gateway.sidecar.address")
local sidecar_mux = require("gateway.sidecar.mux")

local M = {}

-- Through the control socket nginx's own proxy_read_timeout answers first; this only guards
-- against nginx itself stalling.
local CONTROL_ASK_TIMEOUT_MS = 65000
local DEFAULT_ASK_TIMEOUT_MS = 3000

-- What the sidecar is told: nginx's proof, the caller's credential, nginx's settings and
-- nginx's request id, nothing else of the caller's request (so no caller-supplied header can
-- pose as a setting or as the proof). As HTTP headers; auth_frame.question says the same in a
-- frame.
local function question(credential, admin)
  local headers = {}
  local secret = proof.value()
  if secret ~= "" then
    headers[1] = { contract.proof.header, secret }
  end
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
    return frame_codec.question(credential, admin)
  end
  return question(credential, admin)
end

local function ask_at(address, timeout, direct, q)
  if direct then
    return sidecar_mux.ask(address, q, timeout)
  end
  return http.ask(address, contract.auth_path, q, timeout)
end

-- The sidecar's answer ({ status, header, body }) to this request's question (its
-- `credential`, and whether `admin` is required), or nil and why.
function M.ask(credential, admin)
  local address, timeout, direct = sidecar_target()
  local q, why = question_for(direct, credential, admin)
  if not q then
    return nil, why
  end
  return ask_at(address, timeout, direct, q)
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
    key_records.learn(key_id, res, asked_at, max_age_ms)
  else
    ngx.log(ngx.WARN, "cannot refresh a key record: ", why)
  end
end

-- Starts the refresh of `key_id`'s record, asked with `credential` (the right secret), unless
-- another is under way.
function M.refresh(key_id, credential, max_age_ms)
  if not key_records.claim_refresh(key_id, REFRESH_CLAIM_S) then
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

return M
