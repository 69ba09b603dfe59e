-- Checks on the request itself, before any credential is looked at.
local M = {}

-- Control characters other than tab, and DEL: never valid in a header value (RFC 9110).
-- The sidecar's HTTP parser would refuse them, which nginx would report as "auth unavailable".
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

-- A header line must start with a field name (a token, RFC 9110 5.6.2) and a colon. nginx
-- drops a line whose name has other bytes and reads a line without a colon as an empty header,
-- passing the request on either way; the caller then gets an answer to a request it did not send.
local HEADER_LINE = "^[%w!#$%%&'*+%-.^_`|~]+:"

-- Pure: true when a line of `raw` (header lines as ngx.req.raw_header(true) gives them, each
-- ending in CRLF or LF) does not start with a token and a colon.
function M.has_bad_header_line(raw)
  for line in raw:gmatch("[^\r\n]+") do
    if not line:find(HEADER_LINE) then
      return true
    end
  end
  return false
end

-- Pure: a set from a list.
function M.set_of(list)
  local set = {}
  for i = 1, #list do
    set[list[i]] = true
  end
  return set
end

return M
