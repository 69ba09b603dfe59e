-- Asks the sidecar's /auth over a cosocket: directly on the sidecar's own socket (one hop,
-- `$gateway_sidecar`), or, when the sidecar is known only by a DNS name, through nginx's
-- control socket, where nginx proxies /auth to the sidecar upstream and resolves its name.
-- A cosocket rather than a subrequest: ngx.location.capture refuses HTTP/2 requests
-- (lua-nginx-module issue #1195), and the gateway serves HTTP/2.
local M = {}

-- Header names are the contract's: each is checked once per worker, not on every question.
local checked_names = {}
local function safe_name(name)
  local ok = checked_names[name]
  if ok == nil then
    ok = name ~= "" and not name:find("[^%w%-]")
    checked_names[name] = ok
  end
  return ok
end

-- Pure: the request bytes. `headers` is a list of {name, value}. Returns nil and a reason when
-- a value could split the request (nginx never hands such values over; this fails closed).
-- PCRE (compiled once, JIT) rather than a Lua pattern: LuaJIT compiles neither string.find
-- with a pattern nor anything around it, and this runs on every question.
function M.build_request(path, headers)
  local lines = { "GET " .. path .. " HTTP/1.1", "Host: gateway-sidecar" }
  local re_find = ngx.re.find
  for i = 1, #headers do
    local name, value = headers[i][1], headers[i][2]
    if not safe_name(name) or re_find(value, "[\\r\\n\\x00]", "jo") then
      return nil, "unsafe header " .. name
    end
    lines[#lines + 1] = name .. ": " .. value
  end
  lines[#lines + 1] = ""
  lines[#lines + 1] = ""
  return table.concat(lines, "\r\n")
end

-- Pure: "HTTP/1.1 204 No Content" → 204, or nil.
function M.parse_status(line)
  local status = line and line:match("^HTTP/1%.[01] (%d%d%d)")
  return status and tonumber(status)
end

-- Pure: "Name: value" → lower-case name, value (without the whitespace around it); nil for
-- anything else. Plain finds and byte tests, which LuaJIT compiles (a pattern it does not).
local byte, sub, find = string.byte, string.sub, string.find
local SPACE, TAB = 32, 9
function M.parse_header(line)
  local colon = find(line, ":", 1, true)
  if not colon or colon == 1 then
    return nil
  end
  local name = sub(line, 1, colon - 1)
  -- A name is one token: no whitespace in it.
  if find(name, " ", 1, true) or find(name, "\t", 1, true) then
    return nil
  end
  local first, last = colon + 1, #line
  local b = byte(line, first)
  while b == SPACE or b == TAB do
    first = first + 1
    b = byte(line, first)
  end
  b = byte(line, last)
  while last >= first and (b == SPACE or b == TAB) do
    last = last - 1
    b = byte(line, last)
  end
  return name:lower(), sub(line, first, last)
end

-- Pure: "1a;ext=1" → 26; nil for anything that is not a chunk size line.
function M.parse_chunk_size(line)
  local hex = line and line:match("^(%x+)%s*;?.*$")
  return hex and #hex <= 8 and tonumber(hex, 16) or nil
end

local KEEPALIVE_MS = 60000
local POOL_SIZE = 64
local MAX_HEADER_LINES = 64
local MAX_BODY = 65536

-- Reads a chunked body (with its trailers) of at most MAX_BODY bytes.
function M.read_chunked(sock)
  local parts, total = {}, 0
  while true do
    local line, err = sock:receive("*l")
    local size = M.parse_chunk_size(line)
    if not size then
      return nil, "chunk size: " .. tostring(err or line)
    end
    if size == 0 then
      repeat
        line, err = sock:receive("*l")
        if not line then
          return nil, "trailer: " .. tostring(err)
        end
      until line == ""
      return table.concat(parts)
    end
    total = total + size
    if total > MAX_BODY then
      return nil, "body too large"
    end
    local data
    data, err = sock:receive(size)
    if not data then
      return nil, err
    end
    parts[#parts + 1] = data
    line, err = sock:receive("*l")
    if line ~= "" then
      return nil, "chunk end: " .. tostring(err or line)
    end
  end
end

-- Pure: "unix:/path" -> "unix:/path"; "10.0.0.2:8081" -> "10.0.0.2", 8081; nil otherwise.
function M.parse_address(address)
  if type(address) ~= "string" then
    return nil
  end
  if address:find("^unix:/") then
    return address
  end
  local host, port = address:match("^(%d+%.%d+%.%d+%.%d+):(%d+)$")
  port = tonumber(port)
  if host and port and port >= 1 and port <= 65535 then
    return host, port
  end
  return nil
end

local CONNECT_TIMEOUT_MS = 2000
M.CONNECT_TIMEOUT_MS = CONNECT_TIMEOUT_MS

-- Connects (to `pool` when given), sends `bytes` and reads the first line of the answer.
-- Returns the socket and that line, or nil, a reason (`what` names the line) and whether the
-- question may not be asked again: it may when a reused connection broke before any answer
-- (the peer may have closed it while idle).
local function first_line(host, port, bytes, timeout_ms, pool, what)
  local sock = ngx.socket.tcp()
  sock:settimeouts(math.min(CONNECT_TIMEOUT_MS, timeout_ms), timeout_ms, timeout_ms)
  local ok, err
  -- No options argument at all without a pool: the module wants a table there when given.
  if port and pool then
    ok, err = sock:connect(host, port, pool)
  elseif port then
    ok, err = sock:connect(host, port)
  elseif pool then
    ok, err = sock:connect(host, pool)
  else
    ok, err = sock:connect(host)
  end
  if not ok then
    return nil, "connect: " .. tostring(err), true
  end
  local fresh = sock:getreusedtimes() == 0
  ok, err = sock:send(bytes)
  if not ok then
    sock:close()
    return nil, "send: " .. tostring(err), fresh
  end
  local line
  line, err = sock:receive("*l")
  if not line then
    sock:close()
    return nil, what .. ": " .. tostring(err), fresh or err == "timeout"
  end
  return sock, line
end

-- One HTTP attempt: the socket and the answer's status, or as first_line().
local function attempt(host, port, request, timeout_ms)
  local sock, line, final = first_line(host, port, request, timeout_ms, nil, "status line")
  if not sock then
    return nil, line, final
  end
  local status = M.parse_status(line)
  if not status then
    sock:close()
    return nil, "status line: " .. tostring(line), true
  end
  return sock, status
end

-- One request; returns { status, header (lower-case names), body } or nil, reason.
-- `address` is "unix:/path" or "ip:port". `timeout_ms` bounds connect, send and each read:
-- a frozen sidecar is refused (fail closed) after that long.
function M.ask(address, path, headers, timeout_ms)
  local request, why = M.build_request(path, headers)
  if not request then
    return nil, why
  end
  local host, port = M.parse_address(address)
  if not host then
    return nil, "no sidecar address"
  end
  local sock, status, final = attempt(host, port, request, timeout_ms)
  if not sock and not final then
    sock, status = attempt(host, port, request, timeout_ms)
  end
  if not sock then
    return nil, status
  end
  local line, err
  local header, reusable, length = {}, true, 0
  for _ = 1, MAX_HEADER_LINES + 1 do
    line, err = sock:receive("*l")
    if not line then
      sock:close()
      return nil, "headers: " .. tostring(err)
    end
    if line == "" then
      break
    end
    local name, value = M.parse_header(line)
    if name and header[name] == nil then
      header[name] = value
    end
  end
  local body = ""
  local encoding = header["transfer-encoding"]
  if encoding then
    if encoding:lower() ~= "chunked" then
      sock:close()
      return nil, "unexpected transfer-encoding " .. encoding
    end
    body, err = M.read_chunked(sock)
    if not body then
      sock:close()
      return nil, "chunked body: " .. tostring(err)
    end
  else
    length = tonumber(header["content-length"] or "0")
    if not length or length < 0 or length > MAX_BODY then
      sock:close()
      return nil, "bad content-length"
    end
    if length > 0 then
      body, err = sock:receive(length)
      if not body then
        sock:close()
        return nil, "body: " .. tostring(err)
      end
    end
  end
  if (header["connection"] or ""):lower() == "close" then
    reusable = false
  end
  if reusable then
    sock:setkeepalive(KEEPALIVE_MS, POOL_SIZE)
  else
    sock:close()
  end
  return { status = status, header = header, body = body }
end

-- The auth frame (sidecar/frames/auth-frame.ts): how the one hop asks, without HTTP on either
-- side. Question: "GWA1\n", "Name: value\n" per header, "\n". Answer: "GWA1 <status> <header
-- bytes> <body bytes>\n", the header lines (names lower-case), the body.
local FRAME_MAGIC = "GWA1\n"

-- Pure: headers as frame lines ("Name: value\n" each), or nil and a reason (a value that could
-- split the frame).
function M.frame_lines(headers)
  local parts = {}
  local re_find = ngx.re.find
  for i = 1, #headers do
    local name, value = headers[i][1], headers[i][2]
    if not safe_name(name) or re_find(value, "[\\r\\n\\x00]", "jo") then
      return nil, "unsafe header " .. name
    end
    parts[#parts + 1] = name .. ": " .. value .. "\n"
  end
  return table.concat(parts)
end

M.FRAME_MAGIC = FRAME_MAGIC

-- Pure: the question's bytes, or nil and a reason.
function M.build_frame(headers)
  local lines, why = M.frame_lines(headers)
  if not lines then
    return nil, why
  end
  return FRAME_MAGIC .. lines .. "\n"
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
local FRAME_LINE = [[^GWA1 ([1-5][0-9][0-9]) ([0-9]{1,5}) ([0-9]{1,5})$]]
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

-- A sidecar that answered a frame in HTTP predates frames (an upgrade in progress): this
-- worker asks it in HTTP for a while, then tries frames again.
local HTTP_ONLY_S = 60
local http_only_until = 0
M.HTTP_ONLY_S = HTTP_ONLY_S

-- The rest of one answer whose first line is `line`, off `sock`: { status, header, body }, or
-- nil and why ("http" when the sidecar answered in HTTP: it predates frames). The caller owns
-- the socket, closing it on a failure. Shared by a connection of its own and the worker's
-- shared one (sidecar_mux.lua).
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

-- One frame question on a pooled or new connection; as attempt(), plus the answer.
local function frame_attempt(host, port, frame, timeout_ms, pool)
  local sock, line, final = first_line(host, port, frame, timeout_ms, pool, "frame line")
  if not sock then
    return nil, line, final
  end
  local res, why = M.read_frame_answer(sock, line)
  if not res then
    sock:close()
    return nil, why, true
  end
  sock:setkeepalive(KEEPALIVE_MS, POOL_SIZE)
  return res
end

-- The one hop on a connection of its own: asks /auth at `address` (the sidecar's own socket)
-- with `frame` (build_frame's bytes, or a list of pieces); the answer is shaped as ask()'s. A
-- sidecar that speaks only HTTP is asked in HTTP.
function M.ask_direct(address, frame, timeout_ms)
  if ngx.now() < http_only_until then
    return M.ask(address, "/auth", M.frame_headers(frame), timeout_ms)
  end
  local host, port = M.parse_address(address)
  if not host then
    return nil, "no sidecar address"
  end
  -- Their own pool: a connection that spoke HTTP is never handed a frame, nor the reverse.
  local pool = { pool = "gwa1 " .. address }
  local res, err, final = frame_attempt(host, port, frame, timeout_ms, pool)
  if not res and not final then
    res, err = frame_attempt(host, port, frame, timeout_ms, pool)
  end
  if not res and err == "http" then
    ngx.log(ngx.WARN, "the sidecar at ", address, " answers HTTP only; asking it in HTTP")
    http_only_until = ngx.now() + HTTP_ONLY_S
    return M.ask(address, "/auth", M.frame_headers(frame), timeout_ms)
  end
  return res, err
end

return M
