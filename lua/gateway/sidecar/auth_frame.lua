-- The auth frame (sidecar/frames/auth-frame.ts): how the one hop asks, without HTTP on either
-- side. Question: "GWA1\n", "Name: value\n" per header, "\n". Answer: "GWA1 <status> <header
-- bytes> <body bytes>\n", the header lines (names lower-case), the body. GWA1 is the contract's
-- frame_marker. The codec: questions (with this worker's cache of the settings' lines), the
-- number a shared connection gives one, answers.
local contract = require("gateway.contract")
local proof = require("gateway.proof")
local http = require("gateway.sidecar.http")

local M = {}

local sub, find = string.sub, string.find
local re_find = ngx.re.find

local FRAME_MAGIC = contract.frame_marker .. "\n"
M.FRAME_MAGIC = FRAME_MAGIC

-- Pure: headers as frame lines ("Name: value\n" each), or nil and a reason (a value that could
-- split the frame).
function M.frame_lines(headers)
  local parts = {}
  local safe_header = http.safe_header
  for i = 1, #headers do
    local name, value = headers[i][1], headers[i][2]
    if not safe_header(name, value) then
      return nil, "unsafe header " .. name
    end
    parts[#parts + 1] = name .. ": " .. value .. "\n"
  end
  return table.concat(parts)
end

-- Pure: the question's bytes, or nil and a reason.
function M.build_frame(headers)
  local lines, why = M.frame_lines(headers)
  if not lines then
    return nil, why
  end
  return FRAME_MAGIC .. lines .. "\n"
end

-- The question the access phase asks as an auth frame (the one hop). nginx's settings are the
-- same on nearly every request: their lines are built and checked once per worker for each set
-- of values, leaving the request's own values (method, URI, request id, credential) to each
-- question.
local REQUEST_OWN = { request_method = true, request_uri = true, [contract.request_id_variable] = true }
local SETTINGS, OWN = {}, {}
for _, row in ipairs(contract.forwarded) do
  local list = REQUEST_OWN[row[2]] and OWN or SETTINGS
  list[#list + 1] = row
end
-- The gateway's span as the sidecar's parent: empty (not sent) while tracing is off.
OWN[#OWN + 1] = contract.trace_context
local ADMIN_LINE = contract.require_admin_header .. ": true\n"
-- The settings nginx joins into one variable (contract.decision_inputs_variable) key the cache of
-- prefixes with one variable read; only those outside it are read on every question (today the
-- redirect URI). Ten reads a question were 6 % of nginx's time with its cache off.
local INPUTS_VARIABLE = contract.decision_inputs_variable
local OUTSIDE_INPUTS = {}
do
  local inputs = {}
  for _, name in ipairs(contract.decision_inputs) do
    inputs[name] = true
  end
  for _, row in ipairs(SETTINGS) do
    if not inputs[row[2]] then
      OUTSIDE_INPUTS[#OUTSIDE_INPUTS + 1] = row[2]
    end
  end
end
local key_parts = {}
local setting_values = {}
local prefixes, prefix_count, MAX_PREFIXES = {}, 0, 64

local function frame_prefix(var)
  key_parts[1] = var[INPUTS_VARIABLE] or ""
  for i = 1, #OUTSIDE_INPUTS do
    key_parts[i + 1] = var[OUTSIDE_INPUTS[i]] or ""
  end
  local key = table.concat(key_parts, "\n", 1, #OUTSIDE_INPUTS + 1)
  local prefix = prefixes[key]
  if prefix then
    return prefix
  end
  for i = 1, #SETTINGS do
    setting_values[i] = var[SETTINGS[i][2]] or ""
  end
  -- nginx's proof first: the same in every question of this worker (read in the master).
  local headers = {}
  local secret = proof.value()
  if secret ~= "" then
    headers[1] = { contract.proof.header, secret }
  end
  for i = 1, #SETTINGS do
    -- An empty setting is not sent: the sidecar reads absence as the setting's default.
    if setting_values[i] ~= "" then
      headers[#headers + 1] = { SETTINGS[i][1], setting_values[i] }
    end
  end
  local lines, why = M.frame_lines(headers)
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

-- Whether `value` can stay one line of a frame: no CR, LF or NUL. nginx lets none through in
-- any value asked about; this fails closed all the same.
local function one_line(value)
  return not find(value, "\n", 1, true) and not re_find(value, "[\\r\\x00]", "jo")
end

-- This request's question (its `credential`, and whether `admin` is required), or nil and a
-- reason. As the pieces of a frame, not one string: the socket writes them as they are.
-- Joined, every question would be a new long string that differs from the others only in the
-- request id, and LuaJIT's string hash (a few sampled bytes) puts all of those in one chain,
-- compared byte by byte whenever another is made (8 % of nginx's time with the cache off).
function M.question(credential, admin)
  local var = ngx.var
  local prefix, why = frame_prefix(var)
  if not prefix then
    return nil, why
  end
  -- The magic, a place for the number a shared connection gives the question (empty: none;
  -- M.number), the settings' lines, then the request's own.
  local parts = { FRAME_MAGIC, "", prefix }
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

-- Each question on a shared connection carries a number (contract.frame_question_header,
-- gateway.sidecar.mux), which the sidecar sends back with its answer.
local QUESTION_LINE = contract.frame_question_header .. ": "

-- The question `frame` as sent with `number`: in the place M.question's pieces keep for one
-- (the magic, then that place), numbered anew when it is asked again. A question in one string
-- (asked by anyone else) goes as it is, unnumbered.
function M.number(frame, number)
  if type(frame) == "table" and frame[2] == "" then
    frame[2] = { QUESTION_LINE, tostring(number), "\n" }
    return frame
  end
  if type(frame) == "table" and type(frame[2]) == "table" then
    frame[2][2] = tostring(number)
  end
  return frame
end

-- Pure: a frame's pieces (strings, or lists of them) as one string.
local function joined(pieces)
  local out = {}
  for i = 1, #pieces do
    local piece = pieces[i]
    out[i] = type(piece) == "table" and joined(piece) or piece
  end
  return table.concat(out)
end

-- Pure: a question's headers back as {name, value} pairs (to ask a sidecar without frames).
-- `frame` is its bytes, or the list of pieces they are made of.
function M.frame_headers(frame)
  if type(frame) == "table" then
    frame = joined(frame)
  end
  local headers = {}
  local at = #FRAME_MAGIC + 1
  while true do
    local eol = find(frame, "\n", at, true)
    if not eol or eol == at then
      return headers
    end
    local colon = find(frame, ": ", at, true)
    if colon and colon < eol then
      headers[#headers + 1] = { sub(frame, at, colon - 1), sub(frame, colon + 2, eol - 1) }
    end
    at = eol + 1
  end
end

local MAX_FRAME_PART = 65536

-- Pure: "GWA1 204 120 0" -> 204, 120, 0; nil for anything else.
local FRAME_LINE = "^" .. contract.frame_marker .. [[ ([1-5][0-9][0-9]) ([0-9]{1,5}) ([0-9]{1,5})$]]
local frame_captures = {}
function M.parse_frame_line(line)
  if not line or not ngx.re.match(line, FRAME_LINE, "jo", nil, frame_captures) then
    return nil
  end
  local head, body = tonumber(frame_captures[2]), tonumber(frame_captures[3])
  if head > MAX_FRAME_PART or body > MAX_FRAME_PART then
    return nil
  end
  return tonumber(frame_captures[1]), head, body
end

-- Pure: the answer's header block ("name: value\n" lines, names lower-case) -> table; the first
-- of a repeated name wins, as in parse_header's callers.
function M.parse_frame_headers(block)
  local header = {}
  local at, n = 1, #block
  while at <= n do
    local eol = find(block, "\n", at, true) or n + 1
    local colon = find(block, ": ", at, true)
    if colon and colon < eol then
      local name = sub(block, at, colon - 1)
      if header[name] == nil then
        header[name] = sub(block, colon + 2, eol - 1)
      end
    end
    at = eol + 1
  end
  return header
end

-- The rest of one answer whose first line is `line`, off `sock`: { status, header, body }, or
-- nil and why ("http" when the sidecar answered in HTTP: it predates frames). The caller owns
-- the socket, closing it on a failure. Shared by a connection of its own
-- (gateway.sidecar.direct) and the worker's shared one (gateway.sidecar.mux).
function M.read_frame_answer(sock, line)
  local status, head, body = M.parse_frame_line(line)
  if not status then
    if sub(line, 1, 5) == "HTTP/" then
      return nil, "http"
    end
    return nil, "frame line: " .. line
  end
  local data, err = "", nil
  if head + body > 0 then
    data, err = sock:receive(head + body)
    if not data then
      return nil, "frame: " .. tostring(err)
    end
  end
  return {
    status = status,
    header = M.parse_frame_headers(sub(data, 1, head)),
    body = sub(data, head + 1),
  }
end

return M
