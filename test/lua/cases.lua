-- Unit cases for the pure parts of lua/gateway, run inside nginx (the real LuaJIT and ngx API)
-- by lua.test.ts. Each case returns nothing on success and raises on failure.
local entry = require("gateway.entry")
local keying = require("gateway.keying")
local metrics = require("gateway.metrics")
local request_check = require("gateway.request_check")
local sidecar = require("gateway.sidecar_http")
local auth_frame = require("gateway.auth_frame")
local sidecar_address = require("gateway.sidecar_address")
local sha256 = require("gateway.sha256")
local access = require("gateway.access")
local budget = require("gateway.budget")
local keys = require("gateway.keys")
local ratelimit = require("gateway.ratelimit")
local usage = require("gateway.usage")

local function hex(raw)
  return (raw:gsub(".", function(c)
    return string.format("%02x", c:byte())
  end))
end

local cases = {}
local function ceil_of(x)
  return math.ceil(x)
end
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
  eq(#k1, 33, "d + 32 bytes")
  eq(k1:find("supersecret", 1, true), nil, "credential absent")
  eq(keying.key("apk 1.supersecret", "true"), k1, "deterministic")
  eq(keying.key("apk 1.supersecreT", "true") ~= k1, true, "one byte changes it")
  eq(keying.key("apk 1.supersecret", "false") ~= k1, true, "settings change it")
  keying.set_secret_for_tests("secret-two")
  eq(keying.key("apk 1.supersecret", "true") ~= k1, true, "another secret, another key")
end)

case("sha256: digests match FIPS 180-2's examples", function()
  eq(hex(sha256.digest("abc")), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad", "abc")
  eq(hex(sha256.digest("")), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", "empty")
  eq(hex(sha256.digest(string.rep("a", 1000))), "41edece42d63e8d9bf515a9ba6932e1c20cbc9f5a5d134645adb5db1b9737ea3", "two blocks and more")
end)

case("sha256: HMAC matches RFC 4231 (test cases 1 and 2), again after a second use", function()
  sha256.set_hmac_key("Jefe")
  local want = "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
  eq(hex(sha256.hmac("what do ya want for nothing?")), want, "case 2")
  eq(hex(sha256.hmac("what do ya want for nothing?")), want, "case 2 again (state reset)")
  sha256.set_hmac_key(string.rep("\11", 20))
  eq(hex(sha256.hmac("Hi There")), "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7", "case 1")
end)

case("sha256: from_hex takes 64 lower-case digits only", function()
  eq(sha256.from_hex(string.rep("ab", 32)), string.rep("\171", 32), "decoded")
  eq(sha256.from_hex(string.rep("AB", 32)), nil, "upper case")
  eq(sha256.from_hex("ab"), nil, "short")
  eq(sha256.from_hex(nil), nil, "absent")
end)

case("request_check: the PCRE screen agrees with the exact Lua rules on 20,000 random blocks", function()
  -- Blocks built from the characters the rules turn on, so every rule fires often.
  local alphabet = { "a", "Z", "9", "-", "!", ":", " ", "\t", "\r\n", "\n", "\1", "\127", "\0",
    "(", "\"", "/", "\195\169" }
  math.randomseed(7)
  local found = {}
  for _ = 1, 20000 do
    local parts = {}
    for i = 1, math.random(0, 24) do
      parts[i] = alphabet[math.random(#alphabet)]
    end
    local raw = table.concat(parts) .. "\r\n\r\n"
    local max = math.random(1, 6)
    local want = request_check.classify(raw, max)
    eq(request_check.raw_header_problem(raw, max), want, "block " .. string.format("%q", raw))
    found[want or "none"] = true
  end
  -- Well-formed lines (some with the trailing whitespace raw_header turns into a line of its
  -- own), in random numbers: the line count decides.
  local lines = { "X-A: 1\r\n", "b:\r\n", "Authorization: Bearer\n  \r\n", "c: d e\r\n" }
  for _ = 1, 2000 do
    local parts = {}
    for i = 1, math.random(0, 9) do
      parts[i] = lines[math.random(#lines)]
    end
    local raw = table.concat(parts) .. "\r\n"
    local max = math.random(1, 6)
    local want = request_check.classify(raw, max)
    eq(request_check.raw_header_problem(raw, max), want, "lines " .. string.format("%q", raw))
    found[want or "none"] = true
  end
  for _, kind in ipairs({ "none", "control", "line", "many" }) do
    eq(found[kind], true, "some block was " .. kind)
  end
end)

local SECRET = string.rep("Ab0_-", 8) .. "xyz" -- 43 characters

case("access: parse_api_key takes only the issued shape of a key", function()
  local id, secret = access.parse_api_key("apk 12." .. SECRET)
  eq(id, "12", "id")
  eq(secret, SECRET, "secret")
  eq((access.parse_api_key("APK  7." .. SECRET)), "7", "scheme in any case, several spaces")
  eq(access.parse_api_key("apk 012." .. SECRET), nil, "leading zero")
  eq(access.parse_api_key("apk " .. string.rep("9", 16) .. "." .. SECRET), nil, "16-digit id")
  eq((access.parse_api_key("apk " .. string.rep("9", 15) .. "." .. SECRET)), string.rep("9", 15), "15 digits")
  eq(access.parse_api_key("apk 1." .. SECRET:sub(2)), nil, "42 characters")
  eq(access.parse_api_key("apk 1." .. SECRET .. "x"), nil, "44 characters")
  eq(access.parse_api_key("apk 1." .. SECRET .. "\n"), nil, "a line feed after it")
  eq(access.parse_api_key("apk 1." .. SECRET:sub(2) .. "="), nil, "not base64url")
  eq(access.parse_api_key("apkx 1." .. SECRET), nil, "another scheme")
  eq(access.parse_api_key("Bearer 1." .. SECRET), nil, "bearer")
end)

local function record(overrides)
  local rec = { kind = "known", is_admin = "false", client_id = "12", client_name = "Ada%20L",
    hash_hex = string.rep("ab", 32) }
  for k, v in pairs(overrides or {}) do
    rec[k] = v
  end
  return rec
end

case("keys: encode then decode gives back the record, hashes as raw bytes", function()
  local created, back = keys.decode(keys.encode(1700000000.5, record({
    previous_hash_hex = string.rep("cd", 32), previous_until = "1700000100.250", expires_at = "1800000000",
  })), "12")
  eq(created, 1700000000.5, "created")
  eq(back.kind, "known", "kind")
  eq(back.hash, string.rep("\171", 32), "hash")
  eq(back.previous_hash, string.rep("\205", 32), "previous hash")
  eq(back.previous_until, 1700000100.25, "previous until")
  eq(back.expires_at, 1800000000, "expires at")
  eq(back.identity.row, "12", "row")
  eq(back.identity.client_name, "Ada%20L", "name")
  eq(back.identity.method, "apk", "method")
  local _, unknown = keys.decode(keys.encode(1, { kind = "unknown" }), "5")
  eq(unknown.kind, "unknown", "unknown")
  eq(keys.decode("garbage", "1"), nil, "damaged")
  eq(keys.encode(1, record({ client_name = "a\tb" })), nil, "a tab cannot be stored")
end)

case("keys: the verdict of a secret's digest, as the sidecar decides", function()
  local right, old, wrong = sha256.digest("right"), sha256.digest("old"), sha256.digest("wrong")
  local rec = { kind = "known", hash = right, previous_hash = old, previous_until = 100 }
  eq(keys.verdict(rec, right, 50), "pass", "current")
  eq(keys.verdict(rec, old, 99.9), "pass", "previous during its grace")
  eq(keys.verdict(rec, old, 100), "stale", "previous at its grace end: stale, not a guess")
  eq(keys.verdict(rec, wrong, 50), "wrong", "wrong")
  rec.expires_at = 60
  eq(keys.verdict(rec, right, 59), "pass", "before expiry")
  eq(keys.verdict(rec, right, 60), "expired", "right secret at expiry")
  eq(keys.verdict(rec, wrong, 60), "wrong", "a wrong secret learns nothing of the expiry")
  eq(keys.verdict({ kind = "known" }, right, 1), "wrong", "a client without a key")
  eq(keys.verdict({ kind = "unknown" }, right, 1), "unknown", "no such id")
end)

case("keys: from_answer keeps only a well-formed record about the id asked for", function()
  local h = {
    ["x-gateway-key-record"] = "known", ["x-gateway-client-row"] = "12", ["x-client-id"] = "12",
    ["x-client-name"] = "Ada", ["x-client-is-admin"] = "false", ["x-gateway-key-hash"] = string.rep("ab", 32),
  }
  eq(keys.from_answer(h, "12").hash_hex, string.rep("ab", 32), "kept")
  eq(keys.from_answer(h, "13"), nil, "about another id")
  h["x-gateway-key-hash"] = "nothex"
  eq(keys.from_answer(h, "12"), nil, "bad hash")
  h["x-gateway-key-hash"] = nil
  eq(keys.from_answer(h, "12").kind, "known", "no key at all")
  h["x-gateway-previous-key-hash"] = string.rep("cd", 32)
  eq(keys.from_answer(h, "12"), nil, "a previous hash without its grace end")
  h["x-gateway-previous-key-until"] = "17x"
  eq(keys.from_answer(h, "12"), nil, "a grace end that is no number")
  h["x-gateway-previous-key-until"] = "1700000000.5"
  eq(keys.from_answer(h, "12").previous_until, 1700000000.5, "with its grace end")
  eq(keys.from_answer(h, "12").previous_hash, string.rep("\205", 32), "raw as well as hex")
  h["x-client-is-admin"] = "yes"
  eq(keys.from_answer(h, "12"), nil, "bad admin flag")
  eq(keys.from_answer({ ["x-gateway-key-record"] = "unknown", ["x-gateway-client-row"] = "9" }, "9").kind,
    "unknown", "unknown id")
  eq(keys.from_answer({ ["x-gateway-client-row"] = "9" }, "9"), nil, "no record at all")
end)

case("budget: the setting is three numbers", function()
  local b = budget.parse("20 200 60")
  eq(b.per_key, 20, "per key")
  eq(b.per_address, 200, "per address")
  eq(b.window, 60, "window")
  eq(budget.parse("20 200 0"), nil, "no window")
  eq(budget.parse("20 200"), nil, "two numbers")
  eq(budget.parse(nil), nil, "absent")
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
  eq(sidecar.build_request("/auth", { { "Bad Name", "x" } }), nil, "name with space, checked again")
  eq(sidecar.build_request("/auth", { { "Authorization", "a\0b" } }), nil, "NUL")
  eq(sidecar.build_request("/auth", { { "", "x" } }), nil, "no name")
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
  local n2, v2 = sidecar.parse_header("X-A:")
  eq(n2, "x-a", "empty value: name")
  eq(v2, "", "empty value")
  eq(select(2, sidecar.parse_header("X-A:\t v w \t")), "v w", "tabs and spaces around, not inside")
  eq(select(2, sidecar.parse_header("X-A:   ")), "", "only whitespace")
  eq(sidecar.parse_header(" X-A: v"), nil, "leading whitespace")
  eq(sidecar.parse_header("X A: v"), nil, "a space in the name")
  eq(sidecar.parse_header(": v"), nil, "no name")
  eq(select(2, sidecar.parse_header("Location: http://x:1/")), "http://x:1/", "colons in the value")
  eq(sidecar.parse_chunk_size("1a"), 26)
  eq(sidecar.parse_chunk_size("0"), 0)
  eq(sidecar.parse_chunk_size("ff;ext=1"), 255)
  eq(sidecar.parse_chunk_size("zz"), nil)
  eq(sidecar.parse_chunk_size("ffffffff"), 4294967295, "eight digits")
  eq(sidecar.parse_chunk_size("123456789"), nil, "too long")
  eq(sidecar.parse_chunk_size(nil), nil, "the socket gave no line")
end)

case("sidecar: a question's headers back from its frame, in one string or in pieces", function()
  local pieces = { "GWA1\n", { "X-Gateway-Question: ", "12", "\n" }, "X-A: b\n", "Authorization: apk 1.x\n", "\n" }
  for _, frame in ipairs({ pieces, table.concat({ "GWA1\n", "X-Gateway-Question: 12\n", "X-A: b\n", "Authorization: apk 1.x\n", "\n" }) }) do
    local h = auth_frame.frame_headers(frame)
    eq(#h, 3, "headers")
    eq(h[1][1] .. "=" .. h[1][2], "X-Gateway-Question=12", "first")
    eq(h[3][1] .. "=" .. h[3][2], "Authorization=apk 1.x", "last")
  end
end)

case("sidecar_client: auth frames, built and read", function()
  eq(auth_frame.build_frame({ { "Authorization", "apk 1.x" }, { "X-A", "b" } }),
    "GWA1\nAuthorization: apk 1.x\nX-A: b\n\n")
  eq(auth_frame.build_frame({}), "GWA1\n\n", "no headers")
  eq(auth_frame.build_frame({ { "Authorization", "a\nX-Gateway-Require-Admin: false" } }), nil, "LF")
  eq(auth_frame.build_frame({ { "Authorization", "a\rb" } }), nil, "CR")
  eq(auth_frame.build_frame({ { "Authorization", "a\0b" } }), nil, "NUL")
  eq(auth_frame.build_frame({ { "Bad Name", "x" } }), nil, "name with space")
  local status, head, body = auth_frame.parse_frame_line("GWA1 204 120 0")
  eq(status, 204)
  eq(head, 120)
  eq(body, 0)
  eq(select(3, auth_frame.parse_frame_line("GWA1 401 10 73")), 73, "body length")
  eq(auth_frame.parse_frame_line("GWA1 204 120"), nil, "a length missing")
  eq(auth_frame.parse_frame_line("GWA1 204 120 0 "), nil, "trailing space")
  eq(auth_frame.parse_frame_line("GWA1 099 1 0"), nil, "status below 100")
  eq(auth_frame.parse_frame_line("GWA1 204 99999 0"), nil, "headers past 64 KiB")
  eq(auth_frame.parse_frame_line("GWA1 204 0 65537"), nil, "body past 64 KiB")
  eq(auth_frame.parse_frame_line("GWA1 204 0 65536"), 204, "64 KiB exactly")
  eq(auth_frame.parse_frame_line("HTTP/1.1 400 Bad Request"), nil, "an HTTP answer")
  eq(auth_frame.parse_frame_line(nil), nil, "no line")
  local h = auth_frame.parse_frame_headers("x-client-id: 42\nx-empty: \nlocation: http://x:1/\nx-client-id: 7\n")
  eq(h["x-client-id"], "42", "the first of a repeated name")
  eq(h["x-empty"], "", "an empty value")
  eq(h["location"], "http://x:1/", "colons in the value")
  eq(next(auth_frame.parse_frame_headers("")), nil, "no headers")
  eq(auth_frame.parse_frame_headers("no colon here\nx-a: b\n")["x-a"], "b", "a line without a colon is skipped")
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


case("ratelimit: the sidecar's limit text parses to numbers and the draft's policy", function()
  local l = ratelimit.parse("100 1")
  eq(l.requests, 100, "requests")
  eq(l.per, 1, "per")
  eq(l.text, "100 1", "text kept for storing")
  eq(l.policy, '"client";q=100;w=1', "RateLimit-Policy")
  eq(ratelimit.parse("100 1"), l, "parsed once")
  eq(ratelimit.parse("1000000000 86400").requests, 1000000000, "largest")
  eq(ratelimit.parse(nil), nil, "absent")
  eq(ratelimit.parse(""), nil, "empty: no limit")
  eq(ratelimit.parse("0 1"), nil, "zero requests")
  eq(ratelimit.parse("10 0"), nil, "zero seconds")
  eq(ratelimit.parse("10 86401"), nil, "more than a day")
  eq(ratelimit.parse("10  1"), nil, "two spaces")
  eq(ratelimit.parse("10 1 "), nil, "trailing space")
  eq(ratelimit.parse("-1 1"), nil, "negative")
  eq(ratelimit.parse("12345678901 1"), nil, "eleven digits")
end)

case("ratelimit: the sliding window weighs the previous window by its overlap", function()
  eq(ratelimit.estimate(0, 5, 0.3, 1), 5, "no previous window")
  eq(ratelimit.estimate(10, 2, 0.5, 1), 7, "half of the previous")
  eq(ratelimit.estimate(10, 2, 0, 1), 12, "all of the previous at the window's start")
  eq(ratelimit.estimate(60, 0, 45, 60), 15, "a minute's window")
end)

case("ratelimit: Retry-After is when one more request fits, at least a second", function()
  -- A fresh client that used all 5 of a 60 s window at 10 s: in the next window those 5 weigh
  -- 5 * (1 - f), room for one more once f = 0.2, 12 s in: 50 + 12.
  eq(ratelimit.retry_after(5, 60, 0, 5, 10), 62, "the rest of this window and a fifth of the next")
  -- 5 per second, the previous window full, 0.2 s in, 4 allowed here: room when the previous
  -- window weighs 0 (4 + 5 * (1 - f) <= 4 needs f = 1).
  eq(ratelimit.retry_after(5, 1, 5, 4, 0.2), 1, "at least a second")
  -- 100 per 60 s, the previous window held 100, this one 20 at 30 s: 100*(1-f) <= 79 at f=0.21.
  eq(ratelimit.retry_after(100, 60, 100, 20, 30) >= 1, true, "never below one")
  eq(ratelimit.retry_after(100, 600, 100, 20, 30), ceil_of(600 * 0.21 - 30), "within the window")
  -- This window holds more than the limit allows (a lower limit since): wait into the next one.
  eq(ratelimit.retry_after(10, 60, 0, 20, 0), 60 + 33, "into the next window: 20 * (1 - f) <= 9")
end)

case("entry: a decision keeps its rate limit; one stored before limits has none", function()
  local limited = { row = "12", is_admin = "false", method = "apk", client_id = "12",
    client_name = "n", limit = ratelimit.parse("5 60") }
  local _, back = entry.decode(entry.encode(1, limited))
  eq(back.limit.requests, 5, "requests")
  eq(back.limit.per, 60, "per")
  local _, none = entry.decode(entry.encode(1, identity))
  eq(none.limit, nil, "no limit")
  local _, old = entry.decode("1\t12\tfalse\tapk\t12\tn")
  eq(old.client_name, "n", "an entry of six fields decodes")
  eq(old.limit, nil, "without a limit")
end)

case("keys: a record keeps its rate limit, from the answer to the stored value", function()
  local h = {
    ["x-gateway-key-record"] = "known", ["x-gateway-client-row"] = "12", ["x-client-id"] = "12",
    ["x-client-name"] = "Ada", ["x-client-is-admin"] = "false", ["x-gateway-rate-limit"] = "7 2",
  }
  local rec = keys.from_answer(h, "12")
  eq(rec.limit.requests, 7, "from the answer")
  local _, back = keys.decode(keys.encode(1, rec), "12")
  eq(back.identity.limit.requests, 7, "stored and read back")
  eq(back.identity.limit.per, 2, "per")
  h["x-gateway-rate-limit"] = nil
  local _, none = keys.decode(keys.encode(1, keys.from_answer(h, "12")), "12")
  eq(none.identity.limit, nil, "none")
end)

case("usage: generations and the keys the sidecar collects", function()
  eq(usage.generation(1700000004.9), 340000000, "5 s generations")
  eq(usage.generation(1700000005), 340000001, "next")
  local kind, generation, row = usage.parse_key("u340000000 12")
  eq(kind, "u", "allowed")
  eq(generation, 340000000, "generation")
  eq(row, "12", "row")
  eq(usage.parse_key("x1 3"), "x", "limited")
  eq(usage.parse_key("l12 1 5"), nil, "a window key is not a count")
  eq(usage.parse_key("fINVALID_API_KEY|1"), nil, "a failure count is not usage")
end)

case("metrics: every counter the contract names starts at zero in the worker's table", function()
  local contract = require("gateway.contract")
  for i = 1, #contract.counters do
    eq(type(metrics.counts[contract.counters[i]]), "number", contract.counters[i])
  end
end)

case("sidecar_address: names, not sockets or literals, are for the master to resolve", function()
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

case("sidecar_address: a name resolves to an IPv4 address with its port; a bad one does not", function()
  eq(sidecar_address.resolve("localhost:8081"), "127.0.0.1:8081", "localhost")
  local found, why = sidecar_address.resolve("no-such-host.invalid:8081")
  eq(found, nil, "unresolvable")
  eq(type(why), "string", "why")
  eq((sidecar_address.resolve("10.0.0.2:8081")), nil, "a literal is not resolved")
end)

case("sidecar_address: sockets and literals are asked as written; an unresolved name is not", function()
  eq(sidecar_address.direct("unix:/run/sidecar.sock"), "unix:/run/sidecar.sock", "unix")
  eq(sidecar_address.direct("10.0.0.2:8081"), "10.0.0.2:8081", "IPv4")
  -- Not resolved in this nginx's master: asked through the control socket.
  eq(sidecar_address.direct("gateway:8081"), nil, "name")
  eq(sidecar_address.direct("[::1]:8081"), nil, "IPv6")
end)

return function()
  local results = {}
  for i = 1, #cases do
    local ok, err = pcall(cases[i].fn)
    results[#results + 1] = { name = cases[i].name, ok = ok, error = ok and nil or tostring(err) }
  end
  return results
end
