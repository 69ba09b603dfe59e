-- Checks on the request itself, before any credential is looked at.
local contract = require("gateway.contract")

local byte, sub, find, char, gsub, gmatch =
  string.byte, string.sub, string.find, string.char, string.gsub, string.gmatch
local tonumber = tonumber

local M = {}

-- Control characters other than tab, and DEL: never valid in a header value (RFC 9110); the
-- app's parser would refuse them. HTTP/2's values, as nginx decoded them (HTTP/1 is checked
-- on its raw block below).
local CONTROL = "[%z\1-\8\10-\31\127]"

-- Pure: true when any header value (a string or a list of strings) holds a control byte.
function M.has_control_bytes(headers)
  for _, value in pairs(headers) do
    if type(value) == "table" then
      for i = 1, #value do
        if value[i]:find(CONTROL) then
          return true
        end
      end
    elseif value:find(CONTROL) then
      return true
    end
  end
  return false
end

-- HTTP/1's raw header block, checked in a few scans by Lua's C pattern matcher without building
-- a table of the headers (the hot path runs this on every request). A header line must start
-- with a field name (a token, RFC 9110 5.6.2) and a colon: nginx drops a line whose name has
-- other bytes and reads a line without a colon as an empty header, passing the request on
-- either way, so the caller would get an answer to a request it did not send.
local CONTROL_IN_BLOCK = "[%z\1-\8\11\12\14-\31\127]" -- CR and LF end lines; tab is allowed
local TOKEN = "[%w!#$%%&'*+%-.^_`|~]"
-- nginx ends a value at its trailing whitespace with a NUL, which raw_header turns back into a
-- line feed: "Authorization: Bearer   " reads "Authorization: Bearer\n  \r\n". So a line of
-- whitespace alone is that, not the caller's; a line of whitespace then text is a folded line
-- (nginx refuses those itself, so this only backs it up).
local NOT_TOKEN_AT_LINE_START = "\n[^%w!#$%%&'*+%-.^_`|~\r\n \t]"
local WHITESPACE_THEN_TEXT = "\n[ \t]+[^ \t\r\n]"
local TOKEN_AT_LINE_START = "\n" .. TOKEN
local TOKEN_THEN_NOT_COLON = TOKEN .. "+[^%w!#$%%&'*+%-.^_`|~:]"
local FIRST_LINE_WITHOUT_COLON = "^" .. TOKEN_THEN_NOT_COLON
local LATER_LINE_WITHOUT_COLON = "\n" .. TOKEN_THEN_NOT_COLON

-- "many" when `raw` has more than `max` header lines, else nil: line feeds are counted with a
-- plain find (compiled by LuaJIT), the exact count only made when they are too many.
local function count_problem(raw, max)
  local lines, at = 0, 1
  local find = string.find
  while true do
    at = find(raw, "\n", at, true)
    if not at then
      return nil
    end
    lines = lines + 1
    if lines > max + 1 then
      return M.header_lines(raw) > max and "many" or nil
    end
    at = at + 1
  end
end

-- What is wrong with `raw`, in Lua patterns: exact, and slow (LuaJIT does not compile pattern
-- matching: 13 µs for a 150-byte block, measured), so only run once the screen below has found
-- something.
local function classify(raw, max)
  if raw:find(CONTROL_IN_BLOCK) then
    return "control"
  end
  -- The first line, then every line after a line feed, must start with a token; the last
  -- line (the empty one) starts with CR or ends the block.
  local first = raw:sub(1, 1)
  if first ~= "" and first ~= "\r" and first ~= "\n" and not first:find(TOKEN) then
    return "line"
  end
  if raw:find(NOT_TOKEN_AT_LINE_START) or raw:find(WHITESPACE_THEN_TEXT) then
    return "line"
  end
  -- Every line's token run must end in its colon.
  if raw:find(FIRST_LINE_WITHOUT_COLON) or raw:find(LATER_LINE_WITHOUT_COLON) then
    return "line"
  end
  return count_problem(raw, max)
end
M.classify = classify

-- The same rules as two PCRE expressions (compiled once, JIT): every block `classify` finds
-- something in matches one of them, so a clean block is passed on their word alone (0.9 µs).
local TOKEN_CLASS = [[!#$%&'*+\-.^_`|~0-9A-Za-z]]
local BAD_LINE = "(?:[^\\r\\n" .. TOKEN_CLASS .. "]|[" .. TOKEN_CLASS .. "]+[^" .. TOKEN_CLASS .. ":])"
local SCREEN_LATER = "[\\x00-\\x08\\x0b\\x0c\\x0e-\\x1f\\x7f]|\\n" .. BAD_LINE
local SCREEN_FIRST = "\\A" .. BAD_LINE

-- What is wrong with `raw` (ngx.req.raw_header(true): header lines, each ending in CRLF or LF,
-- then an empty line), or nil: "control" (a control byte in a value), "line" (a line that is
-- not a token and a colon), "many" (more than `max` lines).
function M.raw_header_problem(raw, max)
  local find = ngx.re.find
  if find(raw, SCREEN_LATER, "jo") or find(raw, SCREEN_FIRST, "jo") then
    return classify(raw, max)
  end
  return count_problem(raw, max)
end

-- Pure: the header lines of a raw block, not counting the whitespace-only lines raw_header
-- makes of trailing whitespace (only asked when the quick count of line feeds is over).
function M.header_lines(raw)
  local _, later = raw:gsub(TOKEN_AT_LINE_START, "")
  return later + (raw:find("^" .. TOKEN) and 1 or 0)
end

-- Pure: a set from a list.
function M.set_of(list)
  local set = {}
  for i = 1, #list do
    set[list[i]] = true
  end
  return set
end

-- Pure: true when `s` is not valid UTF-8 (overlong forms, surrogates and code points past
-- U+10FFFF included: "%C0%AE" is an overlong "." that some decoders still read as one).
function M.invalid_utf8(s)
  local i, n = 1, #s
  while i <= n do
    local c = byte(s, i)
    if c < 0x80 then
      i = i + 1
    else
      local len, min
      if c >= 0xC2 and c <= 0xDF then
        len, min = 2, 0x80
      elseif c >= 0xE0 and c <= 0xEF then
        len, min = 3, 0x800
      elseif c >= 0xF0 and c <= 0xF4 then
        len, min = 4, 0x10000
      else
        return true
      end
      if i + len - 1 > n then
        return true
      end
      local cp = c % (2 ^ (7 - len))
      for k = 1, len - 1 do
        local b = byte(s, i + k)
        if b < 0x80 or b > 0xBF then
          return true
        end
        cp = cp * 64 + (b - 0x80)
      end
      if cp < min or cp > 0x10FFFF or (cp >= 0xD800 and cp <= 0xDFFF) then
        return true
      end
      i = i + len
    end
  end
  return false
end

-- Pure: true when the raw target (nginx's $request_uri, what goes to the app) has a path that an
-- application could read as another one: a segment of dots and spaces only after
-- percent-decoding ("..%20", "...", ". ."; Windows and some servers trim it to "." or ".."),
-- other than "." or "..", or bytes that are not UTF-8 once decoded ("%C0%AE%C0%AE").
-- Asked for every request, before any credential or permission.
-- docs/decisions/20261201-override-headers-and-dot-segments.md
local function decode(s)
  return (gsub(s, "%%(%x%x)", function(h)
    return char(tonumber(h, 16))
  end))
end

function M.bad_path(target)
  local q = find(target, "?", 1, true)
  local path = q and sub(target, 1, q - 1) or target
  -- The common path: nothing escaped, no dot, no space, no byte past ASCII.
  if not find(path, "[%%. \128-\255]") then
    return false
  end
  for seg in gmatch(path, "[^/]+") do
    -- "." and "..", encoded or not, are the dot segments nginx resolves in $uri and the
    -- permissions refuse (AMBIGUOUS_PATH): not this check's.
    local plain = decode(seg)
    if plain ~= "." and plain ~= ".." and find(plain, "^[. ]+$") then
      return true
    end
  end
  return M.invalid_utf8(decode(path))
end

local answers = contract.answers
local ALLOWED = M.set_of(contract.allowed_methods)
local ALLOW_HEADER = table.concat(contract.allowed_methods, ", ")
-- ngx.req.http_version() of the versions served; anything else nginx parsed (HTTP/1.2, or nil
-- for a version it has no number for) is 505 like HTTP/0.9.
local HTTP1 = { [1.0] = true, [1.1] = true }
local MAX_HEADERS = contract.max_request_headers

-- The access phase's first step: the answer that refuses this request for what it is (its
-- version, method or header block), with its extra headers, or nil when it passes.
function M.refusal()
  local version = ngx.req.http_version()
  local http1 = HTTP1[version]
  if not http1 and version ~= 2.0 then
    return answers.http_version_not_supported
  end
  if not ALLOWED[ngx.req.get_method()] then
    return answers.method_not_allowed, { Allow = ALLOW_HEADER }
  end
  if M.bad_path(ngx.var.request_uri or "") then
    return answers.bad_path
  end
  if http1 then
    -- HTTP/1: a few scans of the raw header block, no table of the headers.
    local problem = M.raw_header_problem(ngx.req.raw_header(true), MAX_HEADERS)
    if problem == "control" then
      return answers.bad_header
    elseif problem == "line" then
      return answers.bad_header_line
    elseif problem == "many" then
      return answers.too_many_headers
    end
  else
    -- HTTP/2 sends header names as HPACK strings, not lines: check the values nginx decoded.
    local headers, truncated = ngx.req.get_headers(MAX_HEADERS, true)
    if truncated then
      return answers.too_many_headers
    end
    if M.has_control_bytes(headers) then
      return answers.bad_header
    end
  end
  return nil
end

return M
