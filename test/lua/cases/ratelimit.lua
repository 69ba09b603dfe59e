-- Cases for lua/gateway/ratelimit.lua, run inside nginx by test/lua/run.lua.
local case, eq = ...
local ratelimit = require("gateway.ratelimit")

local function ceil_of(x)
  return math.ceil(x)
end

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

case("ratelimit: a closed store's Retry-After is the flag's whole seconds, else 1", function()
  eq(ratelimit.closed_wait(3), 3, "the sidecar's seconds")
  eq(ratelimit.closed_wait(2.7), 2, "whole")
  eq(ratelimit.closed_wait(0), 1, "never 0")
  eq(ratelimit.closed_wait(-5), 1, "negative")
  eq(ratelimit.closed_wait(100000), 1, "past the maximum")
  eq(ratelimit.closed_wait("x"), 1, "not a number: still closed")
  eq(ratelimit.closed_wait(true), 1, "a boolean")
end)
