-- Cases for lua/gateway/request_check.lua, run inside nginx by test/lua/run.lua.
local case, eq = ...
local request_check = require("gateway.request_check")

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

case("request_check.set_of", function()
  local set = request_check.set_of({ "GET", "POST" })
  eq(set.GET, true)
  eq(set.DELETE, nil)
end)

case("request_check: dot-and-space segments and non-UTF-8 paths are bad, plain . and .. are nginx's", function()
  for _, target in ipairs({ "/files/..%20", "/files/...", "/files/. .", "/files/%2e%2e%2e", "/files/%2E%20/x",
    "/files/%C0%AE%C0%AE", "/files/%ff", "/files/%ED%A0%80", "/files/%F4%90%80%80", "/files/%E2%82" }) do
    eq(request_check.bad_path(target), true, target)
  end
  for _, target in ipairs({ "/", "/orders/1", "/files/../x", "/files/./x", "/files/%2e%2e/x", "/files/.%2E", "/files/a.b", "/files/.env",
    "/files/%C3%A9", "/files/%E2%82%AC", "/files/%F0%9F%98%80", "/x?a=..%20", "/x?q=%C0%AE" }) do
    eq(request_check.bad_path(target), false, target)
  end
end)
