-- The one hop on a connection of its own (not the worker's shared link, gateway.sidecar.mux):
-- an auth frame asked on a pooled or new connection, and the HTTP-only fallback for a sidecar
-- older than frames. The link asks here when it cannot carry a question itself.
local frame_codec = require("gateway.sidecar.auth_frame")
local http = require("gateway.sidecar.http")

local M = {}

local KEEPALIVE_MS, POOL_SIZE = http.KEEPALIVE_MS, http.POOL_SIZE
local first_line = http.first_line

-- A sidecar that answered a frame in HTTP predates frames (an upgrade in progress): this
-- worker asks it in HTTP for a while, then tries frames again.
local HTTP_ONLY_S = 60
local http_only_until = 0
M.HTTP_ONLY_S = HTTP_ONLY_S

-- One frame question on a pooled or new connection; as sidecar_http's attempt(), plus the
-- answer.
local function frame_attempt(host, port, frame, timeout_ms, pool)
  local sock, line, final = first_line(host, port, frame, timeout_ms, pool, "frame line")
  if not sock then
    return nil, line, final
  end
  local res, why = frame_codec.read_frame_answer(sock, line)
  if not res then
    sock:close()
    return nil, why, true
  end
  sock:setkeepalive(KEEPALIVE_MS, POOL_SIZE)
  return res
end

-- Asks /auth at `address` (the sidecar's own socket) with `frame` (auth_frame.build_frame's
-- bytes, or a list of pieces); the answer is shaped as sidecar_http.ask()'s. A sidecar that
-- speaks only HTTP is asked in HTTP.
function M.ask(address, frame, timeout_ms)
  if ngx.now() < http_only_until then
    return http.ask(address, "/auth", frame_codec.frame_headers(frame), timeout_ms)
  end
  local host, port = http.parse_address(address)
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
    return http.ask(address, "/auth", frame_codec.frame_headers(frame), timeout_ms)
  end
  return res, err
end

return M
