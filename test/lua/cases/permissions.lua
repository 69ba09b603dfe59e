-- Cases for lua/gateway/permissions.lua, run inside nginx by test/lua/run.lua. The texts are
-- PERMISSIONS_TEXT as common/permissions.ts permissionsText writes them; the TypeScript and Lua
-- matchers are compared on generated cases by test/lua/permissions-agreement.test.ts.
local case, eq = ...
local permissions = require("gateway.permissions")

local function judge(text, method, target, line)
  local perms = assert(permissions.parse(text))
  return permissions.judge(perms, method, line or (method .. " " .. target .. " HTTP/1.1"), target)
end

case("permissions: the text parses once to rules; absent is none; malformed is never none", function()
  local p = permissions.parse("2 03/r/** 04/%C3%A9/*")
  eq(p.n, 2, "rules")
  eq(p.rules[1].mask, 3, "GET and HEAD")
  eq(p.rules[1].subtree, true, "subtree")
  eq(p.rules[1].n, 1, "one segment before **")
  eq(p.rules[2].segs[1], "\195\169", "decoded to bytes")
  eq(p.rules[2].segs[2], false, "a star")
  eq(permissions.parse("2 03/r/** 04/%C3%A9/*"), p, "parsed once")
  eq(permissions.parse(nil), nil, "absent: everything")
  eq(permissions.parse(""), nil, "empty: everything")
  eq(permissions.parse("0").n, 0, "no rule: nothing")
  for _, bad in ipairs({ "x", "1", "2 03/a", "1 03a", "1 00/a", "1 0g/a", "1 03/a//b", "1 03/a/",
      "1 03/**/a", "1 03/a*", "01 03/a", "1  03/a", "1 03/a ", "1 03/%zz", "1 03/%4" }) do
    eq(permissions.parse(bad), false, "malformed: " .. bad)
  end
end)

case("permissions: patterns match as defined", function()
  local rows = {
    { "1 01/", "/", nil }, { "1 01/", "/a", "denied" },
    { "1 01/**", "/", nil }, { "1 01/**", "/a/b/c/", nil },
    { "1 01/*", "/a", nil }, { "1 01/*", "/", "denied" }, { "1 01/*", "/a/", "denied" },
    { "1 01/a", "/a", nil }, { "1 01/a", "/a/", "denied" }, { "1 01/a", "/ab", "denied" },
    { "1 01/a/**", "/a", nil }, { "1 01/a/**", "/a/", nil }, { "1 01/a/**", "/a/b/c", nil },
    { "1 01/a/**", "/ab/c", "denied" },
    { "1 01/a/*/c", "/a/b/c", nil }, { "1 01/a/*/c", "/a/b/c/", "denied" },
    { "1 01/a/*/**", "/a", "denied" }, { "1 01/a/*/**", "/a/b", nil },
    { "1 01/caf%C3%A9", "/caf%C3%A9", nil }, { "1 01/caf%C3%A9", "/caf%c3%a9", nil },
    { "1 01/a+b", "/a%2Bb", nil }, { "1 01/a+b", "/a%2Cb", "denied" },
    { "1 01/a/**", "/a/b?x=/../..", nil },
  }
  for _, r in ipairs(rows) do
    eq(judge(r[1], "GET", r[2]), r[3], r[1] .. " on " .. r[2])
  end
end)

case("permissions: methods by bit, HEAD where GET is (the sidecar sets both bits)", function()
  eq(judge("1 03/r", "HEAD", "/r"), nil, "HEAD with GET")
  eq(judge("1 01/r", "HEAD", "/r"), "denied", "the bit decides")
  eq(judge("1 03/r", "POST", "/r"), "denied", "POST")
  eq(judge("2 03/r 04/w", "POST", "/w"), nil, "another rule")
  eq(judge("2 03/r 04/w", "POST", "/r"), "denied", "method and path of one rule")
  eq(judge("0", "GET", "/"), "denied", "no rule")
  eq(judge("1 7f/**", "TRACE", "/"), "denied", "a method no bit names")
end)

case("permissions: targets that could reach the app as another path are refused, and why", function()
  local rows = {
    { "/a b", "control" }, { "/a\0b", "control" }, { "/a\\..\\b", "backslash" },
    { "/a;x=1", "semicolon" }, { "/a/..;/b", "semicolon" }, { "/a#/../b", "fragment" },
    { "/a%2", "bad_escape" }, { "/a%zz", "bad_escape" }, { "/a%2Fb", "encoded_separator" },
    { "/a%2fb", "encoded_separator" }, { "/a%5cb", "encoded_separator" },
    { "/a/%2e%2e/b", "encoded_separator" }, { "/a%252F", "encoded_separator" },
    { "/a%00", "encoded_control" }, { "/a%7F", "encoded_control" },
    { "/a/../b", "dot_segment" }, { "/a/./b", "dot_segment" }, { "/a/..", "dot_segment" },
    { "//a", "empty_segment" }, { "/a//b", "empty_segment" },
  }
  for _, r in ipairs(rows) do
    local refused, why = judge("1 7f/**", "GET", r[1])
    eq(refused, "ambiguous", r[1])
    eq(why, r[2], r[1])
  end
  local refused, why = judge("1 7f/**", "GET", "/a", "GET http://h/a HTTP/1.1")
  eq(refused, "ambiguous", "absolute-form")
  eq(why, "not_origin_form", "absolute-form")
  eq(permissions.why("dot_segment"), "the path holds a . or .. segment", "in words")
end)
