-- Cases for lua/gateway/sidecar/address.lua, run inside nginx by test/lua/run.lua.
local case, eq = ...
local sidecar_address = require("gateway.sidecar.address")

case("sidecar.address: names, not sockets or literals, are for the master to resolve", function()
  local name, port = sidecar_address.parse_name("gateway:8081")
  eq(name, "gateway", "name")
  eq(port, 8081, "port")
  eq(sidecar_address.parse_name("sidecar-1.internal.example:443"), "sidecar-1.internal.example", "dotted")
  eq(sidecar_address.parse_name("unix:/run/sidecar.sock"), nil, "unix socket")
  eq(sidecar_address.parse_name("10.0.0.2:8081"), nil, "IPv4 literal")
  eq(sidecar_address.parse_name("[::1]:8081"), nil, "IPv6 literal")
  eq(sidecar_address.parse_name("gateway:0"), nil, "port 0")
  eq(sidecar_address.parse_name("gateway:65536"), nil, "port too large")
  eq(sidecar_address.parse_name("gateway"), nil, "no port")
  eq(sidecar_address.parse_name("-gateway:8081"), nil, "starts with a hyphen")
  eq(sidecar_address.parse_name(nil), nil, "nil")
end)

case("sidecar.address: a name resolves to an IPv4 address with its port; a bad one does not", function()
  eq(sidecar_address.resolve("localhost:8081"), "127.0.0.1:8081", "localhost")
  local found, why = sidecar_address.resolve("no-such-host.invalid:8081")
  eq(found, nil, "unresolvable")
  eq(type(why), "string", "why")
  eq((sidecar_address.resolve("10.0.0.2:8081")), nil, "a literal is not resolved")
end)

case("sidecar.address: sockets and literals are asked as written; an unresolved name is not", function()
  eq(sidecar_address.direct("unix:/run/sidecar.sock"), "unix:/run/sidecar.sock", "unix")
  eq(sidecar_address.direct("10.0.0.2:8081"), "10.0.0.2:8081", "IPv4")
  -- Not resolved in this nginx's master: asked through the control socket.
  eq(sidecar_address.direct("gateway:8081"), nil, "name")
  eq(sidecar_address.direct("[::1]:8081"), nil, "IPv6")
end)
