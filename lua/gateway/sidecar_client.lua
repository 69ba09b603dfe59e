-- Asks the sidecar over nginx's own control socket, where nginx proxies /auth to the sidecar
-- upstream (keep-alive pool, connect/read timeouts, name resolution done by nginx at start).
-- A cosocket rather than a subrequest: ngx.location.capture refuses HTTP/2 requests
-- (lua-nginx-module issue #1195), and the gateway serves HTTP/2.
local M = {}

-- Pure: the request bytes. `headers` is a list of {name, value}. Returns nil and a reason when
-- a value could split the request (nginx never hands such values over; this fails closed).
function M.build_request(path, headers)
  local lines = { "GET " .. path .. " HTTP/1.1", "Host: gateway-sidecar" }
  for i = 1, #headers do
    local name, value = headers[i][1], headers[i][2]
    if value:find("[\r\n%z]") or name:find("[^%w%-]") then
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

-- Pure: "Name: value" → lower-case name, value; nil for anything else.
function M.parse_header(line)
  local name, value = line:match("^([^:%s]+):[ \t]*(.-)[ \t]*$")
  if not name then
    return nil
  end
  return name:lower(), value
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

-- One request; returns { status, header (lower-case names), body } or nil, reason.
-- `timeout_ms` only guards against nginx itself: the sidecar's own timeout is nginx's
-- proxy_read_timeout on the socket's /auth location, which answers 504 first.
function M.ask(socket_path, path, headers, timeout_ms)
  local request, why = M.build_request(path, headers)
  if not request then
    return nil, why
  end
  local sock = ngx.socket.tcp()
  sock:settimeouts(timeout_ms, timeout_ms, timeout_ms)
  local ok, err = sock:connect(socket_path)
  if not ok then
    return nil, "connect: " .. tostring(err)
  end
  ok, err = sock:send(request)
  if not ok then
    sock:close()
    return nil, "send: " .. tostring(err)
  end
  local line
  line, err = sock:receive("*l")
  local status = M.parse_status(line)
  if not status then
    sock:close()
    return nil, "status line: " .. tostring(err or line)
  end
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
