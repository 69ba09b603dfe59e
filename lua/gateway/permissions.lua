-- A client's permissions in nginx (docs/decisions/20261128-permissions.md): its rules' text
-- (contract.ts PERMISSIONS_TEXT), carried with the decision or key record like the rate limit,
-- parsed once per worker; the path a request is decided on; and the check. The same rules as
-- common/permissions.ts (decidePath, patternMatches), which the tests hold this code to.
local contract = require("gateway.contract")
local lrucache = require("resty.lrucache")

local M = {}

local BITS = contract.permissions.method_bits
local WHY = contract.permissions.ambiguous
local band = require("bit").band
local byte, sub, find, char, gsub = string.byte, string.sub, string.find, string.char, string.gsub
local tonumber = tonumber

-- Parsed rule sets by their text: a record or decision decoded again finds its rules here.
-- Bounded: the texts come from the sidecar, one per restricted client.
local parsed = assert(lrucache.new(1024))
-- What a text that is not PERMISSIONS_TEXT parses to: never "no rules" (that would allow
-- everything). The callers treat the decision or record holding it as damaged.
local MALFORMED = false

local function hex_byte(h)
  return char(tonumber(h, 16))
end

-- Pure: one rule's text `<2 hex digits><pattern>` -> the rule, or nil. A pattern's segments
-- are bytes (`%XX` decoded); `*` is false; a final `**` makes it a subtree.
local function parse_rule(token)
  local mask = tonumber(sub(token, 1, 2), 16)
  local pattern = sub(token, 3)
  if not mask or not find(sub(token, 1, 2), "^%x%x$") or mask == 0
      or byte(pattern, 1) ~= 47 then
    return nil
  end
  local rule = { mask = mask, subtree = false }
  if pattern == "/" then
    rule.segs, rule.n = { "" }, 1
    return rule
  end
  local segs, n = {}, 0
  local at = 2
  while true do
    local slash = find(pattern, "/", at, true)
    local seg = sub(pattern, at, (slash or 0) - 1)
    if seg == "" then
      return nil
    end
    n = n + 1
    segs[n] = seg
    if not slash then
      break
    end
    at = slash + 1
  end
  if segs[n] == "**" then
    rule.subtree = true
    segs[n] = nil
    n = n - 1
  end
  for i = 1, n do
    local seg = segs[i]
    if seg == "*" then
      segs[i] = false
    elseif find(seg, "*", 1, true) then
      return nil
    else
      -- Every % starts an escape of two hex digits (a pattern holds no % of its own).
      local decoded, escapes = gsub(seg, "%%(%x%x)", hex_byte)
      local _, percents = gsub(seg, "%%", "")
      if percents ~= escapes then
        return nil
      end
      segs[i] = decoded
    end
  end
  rule.segs, rule.n = segs, n
  return rule
end

-- Pure: PERMISSIONS_TEXT -> { text, rules } (parsed once per worker); nil when absent or
-- empty (the client may call everything); false when malformed (see MALFORMED).
function M.parse(text)
  if text == nil or text == "" then
    return nil
  end
  local found = parsed:get(text)
  if found ~= nil then
    return found
  end
  local digits = text:match("^%d+")
  local count = tonumber(digits)
  local result = MALFORMED
  if count and count <= 1000 and digits == tostring(count) then
    local rules, n, ok = {}, 0, true
    local at = #digits + 1
    while at <= #text do
      if byte(text, at) ~= 32 then
        ok = false
        break
      end
      local stop = find(text, " ", at + 1, true)
      local rule = parse_rule(sub(text, at + 1, (stop or 0) - 1))
      if not rule then
        ok = false
        break
      end
      n = n + 1
      rules[n] = rule
      at = stop or #text + 1
    end
    if ok and n == count then
      result = { text = text, rules = rules, n = n }
    end
  end
  parsed:set(text, result)
  return result
end

-- Pure: the path a restricted client's request is decided on, from the raw target (nginx's
-- $request_uri, exactly what goes upstream): the part before `?`, percent-decoded once, and
-- its segments. nil and why (a key of contract.permissions.ambiguous) for a target that could
-- reach the application as another path. common/permissions.ts decidePath, the same checks in
-- the same order.
local SPECIAL = "[%z\1-\32\127\\;#%%]"

function M.decide_path(target)
  if byte(target, 1) ~= 47 then
    return nil, "not_origin_form"
  end
  local q = find(target, "?", 1, true)
  local raw = q and sub(target, 1, q - 1) or target
  local path = raw
  local at = find(raw, SPECIAL)
  if at then
    local pieces, np, from = {}, 0, 1
    while at do
      local c = byte(raw, at)
      if c ~= 37 then
        if c <= 32 or c == 127 then
          return nil, "control"
        elseif c == 92 then
          return nil, "backslash"
        elseif c == 59 then
          return nil, "semicolon"
        end
        return nil, "fragment"
      end
      local h = sub(raw, at + 1, at + 2)
      if not find(h, "^%x%x$") then
        return nil, "bad_escape"
      end
      local b = tonumber(h, 16)
      if b == 47 or b == 92 or b == 46 or b == 37 then
        return nil, "encoded_separator"
      end
      if b < 32 or b == 127 then
        return nil, "encoded_control"
      end
      np = np + 1
      pieces[np] = sub(raw, from, at - 1)
      np = np + 1
      pieces[np] = char(b)
      from = at + 3
      at = find(raw, SPECIAL, from)
    end
    np = np + 1
    pieces[np] = sub(raw, from)
    path = table.concat(pieces, "", 1, np)
  end
  -- Segments, split on the decoded path: no decoded byte is a slash (refused above).
  local segs, n, from = {}, 0, 2
  local len = #path
  while true do
    local slash = find(path, "/", from, true)
    local seg = sub(path, from, (slash or len + 1) - 1)
    n = n + 1
    segs[n] = seg
    if seg == "." or seg == ".." then
      return nil, "dot_segment"
    end
    if not slash then
      break
    end
    if seg == "" then
      return nil, "empty_segment"
    end
    from = slash + 1
  end
  return path, segs, n
end

-- Pure: whether a rule's pattern matches a decided path's segments.
local function matches(rule, segs, n)
  local want = rule.n
  if rule.subtree then
    if n < want then
      return false
    end
  elseif n ~= want then
    return false
  end
  local rsegs = rule.segs
  for i = 1, want do
    local lit = rsegs[i]
    if lit == false then
      if segs[i] == "" then
        return false
      end
    elseif segs[i] ~= lit then
      return false
    end
  end
  return true
end

-- Pure: whether the parsed permissions `perms` let `method` through on the decided path's
-- segments (HEAD's bit is set wherever GET's is: the sidecar writes it so).
function M.allows(perms, method, segs, n)
  local bit = BITS[method]
  if not bit then
    return false
  end
  local rules = perms.rules
  for i = 1, perms.n do
    local rule = rules[i]
    if band(rule.mask, bit) ~= 0 and matches(rule, segs, n) then
      return true
    end
  end
  return false
end

-- This request against `perms`: nil when it passes; else "ambiguous" and why, or "denied".
-- `request_line` tells an absolute-form target (nginx's $request_uri holds only its path).
function M.judge(perms, method, request_line, target)
  -- "GET http://host/x HTTP/1.1": the target starts right after the method and a space. A
  -- request without a line or a target (none reaches here) is refused, never passed.
  if byte(request_line or "", #method + 2) ~= 47 then
    return "ambiguous", "not_origin_form"
  end
  local path, segs, n = M.decide_path(target or "")
  if not path then
    return "ambiguous", segs
  end
  if M.allows(perms, method, segs, n) then
    return nil
  end
  return "denied"
end

-- The sentence of an ambiguity's reason.
function M.why(reason)
  return WHY[reason] or reason
end

return M
