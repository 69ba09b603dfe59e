-- Where the Lua code reaches the sidecar in one hop. A unix socket or an IPv4 literal is used
-- as written. A DNS name (the containers' `gateway:8081`) is resolved once, in nginx's master
-- while it loads the configuration (init_by_lua), with the C library's resolver: exactly when
-- and how nginx resolves the same name in its `upstream` block, so a reload (the proxy image's
-- upstream watcher reloads when the name moves) resolves both again. No DNS on the request
-- path, and no `resolver` directive. A name that did not resolve then is asked through the
-- control socket, as before (docs/decisions/20261127-containers-one-hop.md).
local ffi = require("ffi")
local sidecar_http = require("gateway.sidecar.http")

local M = {}

-- IPv4 only, as the upstream watcher (`getent ahostsv4`): glibc's layout on Linux.
pcall(
  ffi.cdef,
  [[
struct gateway_addrinfo {
  int ai_flags;
  int ai_family;
  int ai_socktype;
  int ai_protocol;
  uint32_t ai_addrlen;
  const uint8_t *ai_addr;
  char *ai_canonname;
  struct gateway_addrinfo *ai_next;
};
int getaddrinfo(const char *node, const char *service, const struct gateway_addrinfo *hints,
                struct gateway_addrinfo **res);
void freeaddrinfo(struct gateway_addrinfo *res);
const char *gai_strerror(int errcode);
]]
)

local AF_INET = 2
local SOCK_STREAM = 1

-- "name:port" -> name, port; nil for anything else (a unix socket, an IP literal, garbage).
function M.parse_name(address)
  if type(address) ~= "string" or sidecar_http.parse_address(address) then
    return nil
  end
  local name, port = address:match("^([%w][%w%.%-]*):(%d+)$")
  port = tonumber(port)
  if not name or not name:find("%a") or not port or port < 1 or port > 65535 then
    return nil
  end
  return name, port
end

-- Blocking (the master, at configuration load): "name:port" -> "a.b.c.d:port", or nil, why.
function M.resolve(address)
  local name, port = M.parse_name(address)
  if not name then
    return nil, "not host:port with a DNS name"
  end
  local hints = ffi.new("struct gateway_addrinfo")
  hints.ai_family = AF_INET
  hints.ai_socktype = SOCK_STREAM
  local out = ffi.new("struct gateway_addrinfo *[1]")
  local rc = ffi.C.getaddrinfo(name, nil, hints, out)
  if rc ~= 0 then
    return nil, ffi.string(ffi.C.gai_strerror(rc))
  end
  local found
  local ai = out[0]
  while ai ~= nil do
    if ai.ai_family == AF_INET and ai.ai_addr ~= nil then
      -- struct sockaddr_in: family (2 bytes), port (2), then the address (4).
      local a = ai.ai_addr
      found = string.format("%d.%d.%d.%d:%d", a[4], a[5], a[6], a[7], port)
      break
    end
    ai = ai.ai_next
  end
  ffi.C.freeaddrinfo(out[0])
  if not found then
    return nil, "no IPv4 address"
  end
  return found
end

-- Names resolved in the master; the workers inherit the table when they fork.
local resolved = {}

-- In the master: resolves `address` when it is a DNS name. A failure is logged, not fatal
-- (nginx -t runs this too, and the control socket still reaches the sidecar).
function M.resolve_at_start(address)
  if not M.parse_name(address) then
    return
  end
  -- Protected: whatever happens here must not stop nginx from loading its configuration.
  local ok, found, why = pcall(M.resolve, address)
  if not ok then
    found, why = nil, found
  end
  resolved[address] = found
  if not found then
    ngx.log(
      ngx.WARN,
      "gateway: sidecar ",
      address,
      " did not resolve (",
      why,
      "); misses ask it through the control socket until nginx reloads"
    )
  end
end

-- Per worker: each distinct value of $gateway_sidecar decided once.
local decided = {}

-- The address to ask in one hop for the value of $gateway_sidecar, or nil: ask through the
-- control socket.
function M.direct(address)
  local known = decided[address]
  if known == nil then
    if sidecar_http.parse_address(address) then
      known = address
    else
      known = resolved[address] or false
    end
    decided[address] = known
  end
  return known or nil
end

return M
