-- The HTTP/1.1 client that asks the sidecar's /auth over a cosocket: through nginx's control
-- socket, where nginx proxies /auth to the sidecar upstream and resolves its name (the sidecar
-- known only by a DNS name), or on the sidecar's own socket when it predates auth frames
-- (gateway.sidecar.direct). Also the connection plumbing the frames share (first_line,
-- parse_address). A cosocket rather than a subrequest: ngx.location.capture refuses HTTP/2
-- requests (lua-nginx-module issue #1195), and the gateway serves HTTP/2.
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

-- Whether a header can be sent as a line, of a request or of an auth frame (gateway.sidecar.auth_frame):
-- a name of the contract's shape, and a value without CR, LF or NUL.
function M.safe_header(name, value)
  return safe_name(name) and not ngx.re.find(value, "[\\r\\n\\x00]", "jo")
end

-- Pure: the request bytes. `headers` is a list of {name, value}. Returns nil and a reason when
-- a value could split the request (nginx never hands such values over; this fails closed).
-- PCRE (compiled once, JIT) rather than a Lua pattern: LuaJIT compiles neither string.find
-- with a pattern nor anything around it, and this runs on every question.
function M.build_request(path, headers)
  local lines = { "GET " .. path .. " HTTP/1.1", "Host: gateway-sidecar" }
  local safe_header = M.safe_header
  for i = 1, #headers do
    local name, value = headers[i][1], headers[i][2]
    if not safe_header(name, value) then
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
M.KEEPALIVE_MS, M.POOL_SIZE = KEEPALIVE_MS, POOL_SIZE
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
-- (the peer may have closed it while idle). An HTTP request's or an auth frame's.
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
M.first_line = first_line

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

return M
