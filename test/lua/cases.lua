-- Unit cases for the pure parts of lua/gateway, run inside nginx (the real LuaJIT and ngx API)
-- by lua.test.ts. Each case returns nothing on success and raises on failure.
local entry = require("gateway.entry")
local keying = require("gateway.keying")
local metrics = require("gateway.metrics")
local request_check = require("gateway.request_check")
local sidecar = require("gateway.sidecar_client")

local cases = {}
local function case(name, fn)
  cases[#cases + 1] = { name = name, fn = fn }
end
local function eq(actual, expected, what)
  if actual ~= expected then
    error((what or "value") .. ": expected " .. tostring(expected) .. ", got " .. tostring(actual), 2)
  end
end

local identity = { row = "12", is_admin = "true", method = "apk", client_id = "12", client_name = "Ada%20L" }

case("entry: encode then decode gives back the identity and the time", function()
  local created, back = entry.decode(entry.encode(1700000000.123, identity))
  eq(created, 1700000000.123, "created")
  for k, v in pairs(identity) do
    eq(back[k], v, k)
  end
end)

case("entry: an empty client name survives", function()
  local id = { row = "1", is_admin = "false", method = "bearer", client_id = "sub", client_name = "" }
  local _, back = entry.decode(entry.encode(1, id))
  eq(back.client_name, "", "client_name")
end)

case("entry: a field with a tab is not encoded (never a shifted identity)", function()
  local id = { row = "1", is_admin = "false", method = "apk", client_id = "a\tb", client_name = "x" }
  eq(entry.encode(1, id), nil)
  id.client_id = "\tb"
  eq(entry.encode(1, id), nil, "a tab as the first byte")
end)

case("entry: a missing field is not encoded", function()
  eq(entry.encode(1, { row = "1", is_admin = "false", method = "apk", client_id = "1" }), nil)
end)

case("entry: damaged values decode to nil", function()
  eq(entry.decode("garbage"), nil)
  eq(entry.decode("x\t1\ttrue\tapk\t1\tn"), nil)
  eq(entry.decode("1\t1\ttrue\tapk\t1"), nil)
end)

case("entry.fresh: a revocation at or after the decision kills it; before, it does not", function()
  eq(entry.fresh(100, nil, nil), true, "no marker")
  eq(entry.fresh(100, 99.999, nil), true, "older client marker")
  eq(entry.fresh(100, 100, nil), false, "same instant")
  eq(entry.fresh(100, 100.001, nil), false, "newer client marker")
  eq(entry.fresh(100, nil, 99), true, "older global marker")
  eq(entry.fresh(100, nil, 100), false, "same-instant global marker")
  eq(entry.fresh(100, 50, 150), false, "newer global marker")
end)

case("entry.lifetime: max age, capped by valid_until, never negative use", function()
  eq(entry.lifetime("30000", 1000, nil), 30, "max age")
  eq(entry.lifetime("30000", 1000, "1010"), 10, "exp first")
  eq(entry.lifetime("30000", 1000, "5000"), 30, "max age first")
  eq(entry.lifetime("30000", 1000, "999") <= 0, true, "already expired")
  eq(entry.lifetime("0", 1000, nil), 0, "off")
  eq(entry.lifetime(nil, 1000, nil), 0, "unset")
  eq(entry.lifetime("30000", 1000, "not a number"), 30, "unreadable exp ignored")
end)

case("keying: material separates credential and settings unambiguously", function()
  local a = keying.material("apk 1.x", "true\0false")
  local b = keying.material("apk 1.x\0true", "false")
  eq(a == b, true, "NUL cannot occur in a header, so equal material needs equal inputs")
  eq(keying.material("k", "true") ~= keying.material("k", "false"), true, "settings matter")
end)

case("keying: the key is a keyed hash, not the credential", function()
  keying.set_secret_for_tests("secret-one")
  local k1 = keying.key("apk 1.supersecret", "true")
  eq(#k1, 21, "d + 20 bytes")
  eq(k1:find("supersecret", 1, true), nil, "credential absent")
  eq(keying.key("apk 1.supersecret", "true"), k1, "deterministic")
  eq(keying.key("apk 1.supersecreT", "true") ~= k1, true, "one byte changes it")
  eq(keying.key("apk 1.supersecret", "false") ~= k1, true, "settings change it")
  keying.set_secret_for_tests("secret-two")
  eq(keying.key("apk 1.supersecret", "true") ~= k1, true, "another secret, another key")
end)

case("request_check: control bytes in any header value are found", function()
  eq(request_check.has_control_bytes({ a = "plain", b = "tab\tok" }), false, "tab is allowed")
  eq(request_check.has_control_bytes({ a = "x\1y" }), true, "SOH")
  eq(request_check.has_control_bytes({ a = "x\127" }), true, "DEL")
  eq(request_check.has_control_bytes({ a = "x\0" }), true, "NUL")
  eq(request_check.has_control_bytes({ a = { "ok", "bad\27" } }), true, "repeated header")
  eq(request_check.has_control_bytes({ a = { "bad\27", "ok" } }), true, "first of a repeated header")
  eq(request_check.has_control_bytes({ a = "caf\195\169" }), false, "UTF-8 is not control")
end)

case("request_check: a header line needs a token name and a colon", function()
  local function problem(raw)
    return request_check.raw_header_problem(raw, 100)
  end
  local ok = "Host: a\r\nX_Under: b\r\nX-A:\r\nAuthorization: apk 1.x:y\r\n\r\n"
  eq(problem(ok), nil, "valid lines, empty value, underscore, colon in a value")
  eq(problem("Host: a\nX-A: b\n\n"), nil, "LF line ends")
  eq(problem(""), nil, "no headers")
  eq(problem("\r\n"), nil, "only the empty line")
  eq(problem("Host: a\r\nXAb\r\n\r\n"), "line", "no colon")
  eq(problem("XAb\r\nHost: a\r\n\r\n"), "line", "no colon on the first line")
  eq(problem("X(A): b\r\n"), "line", "separator in the name")
  eq(problem("Host: a\r\nX(A): b\r\n\r\n"), "line", "separator in a later name")
  eq(problem("X A: b\r\n"), "line", "space in the name")
  eq(problem("X-\195\169: b\r\n"), "line", "UTF-8 in the name")
  eq(problem(": b\r\n"), "line", "empty name")
  eq(problem("Host: a\r\n: b\r\n\r\n"), "line", "empty later name")
  eq(problem("Host: a\r\n b\r\n\r\n"), "line", "obs-fold continuation")
  eq(problem("Host: a\r\n\t b\r\n\r\n"), "line", "obs-fold after a tab")
  -- What raw_header gives for values with trailing whitespace ("Authorization: Bearer   ",
  -- "X-B: c "): nginx's end-of-value NUL comes back as a line feed.
  eq(problem("Host: a\r\nAuthorization: Bearer\n    \r\nX-B: c\n\r\nX-C: d\r\n\r\n"), nil,
    "trailing whitespace after a value")
  eq(problem("Host: a\nX-A: b\n \t \n\n"), nil, "trailing whitespace, LF line ends")
end)

case("request_check: control bytes and too many lines in the raw block", function()
  local function problem(raw, max)
    return request_check.raw_header_problem(raw, max or 100)
  end
  eq(problem("X-A: a\tb\r\n\r\n"), nil, "tab in a value")
  eq(problem("X-A: a\1b\r\n\r\n"), "control", "SOH in a value")
  eq(problem("X-A: a\0b\r\n\r\n"), "control", "NUL in a value")
  eq(problem("X-A: a\127\r\n\r\n"), "control", "DEL in a value")
  eq(problem("X-A: caf\195\169\r\n\r\n"), nil, "UTF-8 in a value")
  local lines = {}
  for i = 1, 3 do
    lines[i] = "X-" .. i .. ": v\r\n"
  end
  eq(problem(table.concat(lines) .. "\r\n", 3), nil, "exactly max lines")
  eq(problem(table.concat(lines) .. "X-4: v\r\n\r\n", 3), "many", "one more than max")
  local padded = {}
  for i = 1, 3 do
    padded[i] = "X-" .. i .. ": v\n  \r\n"
  end
  eq(problem(table.concat(padded) .. "\r\n", 3), nil, "max lines, each with trailing whitespace")
  eq(problem(table.concat(padded) .. "X-4: v\n  \r\n\r\n", 3), "many",
    "one more than max, with trailing whitespace")
end)

case("sidecar_client: requests refuse values that could split them", function()
  local req = sidecar.build_request("/auth", { { "Authorization", "apk 1.x" }, { "X-A", "b" } })
  eq(req, "GET /auth HTTP/1.1\r\nHost: gateway-sidecar\r\nAuthorization: apk 1.x\r\nX-A: b\r\n\r\n")
  eq(sidecar.build_request("/auth", { { "Authorization", "a\r\nX-Admin: true" } }), nil, "CRLF")
  eq(sidecar.build_request("/auth", { { "Authorization", "a\nb" } }), nil, "LF")
  eq(sidecar.build_request("/auth", { { "Bad Name", "x" } }), nil, "name with space")
end)

case("sidecar_client: status lines, header lines and chunk sizes", function()
  eq(sidecar.parse_status("HTTP/1.1 204 No Content"), 204)
  eq(sidecar.parse_status("HTTP/1.0 401 Unauthorized"), 401)
  eq(sidecar.parse_status("HTTP/2 200"), nil)
  eq(sidecar.parse_status("garbage"), nil)
  eq(sidecar.parse_status(nil), nil)
  local name, value = sidecar.parse_header("X-Client-Id:  42 ")
  eq(name, "x-client-id")
  eq(value, "42")
  eq(sidecar.parse_header("no colon"), nil)
  eq(sidecar.parse_chunk_size("1a"), 26)
  eq(sidecar.parse_chunk_size("0"), 0)
  eq(sidecar.parse_chunk_size("ff;ext=1"), 255)
  eq(sidecar.parse_chunk_size("zz"), nil)
  eq(sidecar.parse_chunk_size("ffffffff"), 4294967295, "eight digits")
  eq(sidecar.parse_chunk_size("123456789"), nil, "too long")
  eq(sidecar.parse_chunk_size(nil), nil, "the socket gave no line")
end)

case("request_check.set_of", function()
  local set = request_check.set_of({ "GET", "POST" })
  eq(set.GET, true)
  eq(set.DELETE, nil)
end)

case("metrics.drain: hands over every non-zero count once, then zeroes it", function()
  local counts = { cache_hit = 3, cache_miss = 0, cache_eviction = 1 }
  local refused = { [401] = 2, [503] = 0 }
  local added = {}
  local function add(key, n)
    eq(added[key], nil, "added twice: " .. key)
    added[key] = n
  end
  metrics.drain(counts, refused, add)
  eq(added.cache_hit, 3, "hits")
  eq(added.cache_eviction, 1, "evictions")
  eq(added.cache_miss, nil, "nothing to add for a zero")
  eq(added.refused_401, 2, "refusals by status")
  eq(added.refused_503, nil, "no zero refusals")
  eq(counts.cache_hit, 0, "zeroed")
  eq(refused[401], 0, "zeroed")
  added = {}
  metrics.drain(counts, refused, add)
  eq(next(added), nil, "a second drain adds nothing")
end)

case("metrics: every counter the contract names starts at zero in the worker's table", function()
  local contract = require("gateway.contract")
  for i = 1, #contract.counters do
    eq(type(metrics.counts[contract.counters[i]]), "number", contract.counters[i])
  end
end)

return function()
  local results = {}
  for i = 1, #cases do
    local ok, err = pcall(cases[i].fn)
    results[#results + 1] = { name = cases[i].name, ok = ok, error = ok and nil or tostring(err) }
  end
  return results
end
