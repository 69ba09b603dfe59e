-- Cases for lua/gateway/sidecar/auth_frame.lua, run inside nginx by test/lua/run.lua.
local case, eq = ...
local auth_frame = require("gateway.sidecar.auth_frame")

case("sidecar.auth_frame: a question's headers back from its frame, in one string or in pieces", function()
  local pieces = { "GWA1\n", { "X-Gateway-Question: ", "12", "\n" }, "X-A: b\n", "Authorization: apk 1.x\n", "\n" }
  for _, frame in ipairs({ pieces, table.concat({ "GWA1\n", "X-Gateway-Question: 12\n", "X-A: b\n", "Authorization: apk 1.x\n", "\n" }) }) do
    local h = auth_frame.frame_headers(frame)
    eq(#h, 3, "headers")
    eq(h[1][1] .. "=" .. h[1][2], "X-Gateway-Question=12", "first")
    eq(h[3][1] .. "=" .. h[3][2], "Authorization=apk 1.x", "last")
  end
end)

case("sidecar.auth_frame: auth frames, built and read", function()
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

case("sidecar.auth_frame: number puts a question's number in the place its pieces keep, anew when asked again", function()
  local frame = { "GWA1\n", "", "X-A: b\n", "\n" }
  eq(auth_frame.number(frame, 7), frame, "the same pieces")
  eq(auth_frame.frame_headers(frame)[1][1] .. "=" .. auth_frame.frame_headers(frame)[1][2], "X-Gateway-Question=7", "numbered")
  auth_frame.number(frame, 8)
  eq(auth_frame.frame_headers(frame)[1][2], "8", "numbered anew")
  eq(#auth_frame.frame_headers(frame), 2, "one number line")
  eq(auth_frame.number("GWA1\nX-A: b\n\n", 9), "GWA1\nX-A: b\n\n", "a question in one string goes unnumbered")
end)
