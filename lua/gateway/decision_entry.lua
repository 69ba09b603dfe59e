-- A cached decision as stored in the shared dict: one string, no credential in it.
--   created <TAB> row <TAB> is_admin <TAB> method <TAB> client_id <TAB> client_name
--   [<TAB> rate limit [<TAB> permissions]]
-- client_id and client_name are percent-encoded by the sidecar, so they never hold a tab. The
-- rate limit ("<requests> <per_seconds>", gateway.ratelimit) is empty or absent for none. The
-- permissions (gateway.permissions' text) are absent for a client without rules: its entry is
-- as before them. The nginx module reads the same field and passes a restricted client's
-- request only when its rules allow it (ngx_http_gateway_hit_permits); the rest is this code's.
local permissions = require("gateway.permissions")
local ratelimit = require("gateway.ratelimit")

local M = {}

local TAB = "\t"

-- Pure. Returns nil when a field could break the format (then the decision is not cached).
local FIELDS = { "row", "is_admin", "method", "client_id", "client_name" }

function M.encode(created, identity)
  local fields = {}
  -- By name, not with #: a missing field must not shorten the list unnoticed.
  for i = 1, #FIELDS do
    local value = identity[FIELDS[i]]
    if type(value) ~= "string" or value:find(TAB, 1, true) then
      return nil
    end
    fields[i] = value
  end
  local limit = identity.limit
  fields[#FIELDS + 1] = limit and limit.text or ""
  local perms = identity.permissions
  if perms then
    fields[#FIELDS + 2] = perms.text
  end
  return string.format("%.3f", created) .. TAB .. table.concat(fields, TAB)
end

-- Pure. Returns created (number) and the identity table, or nil for a damaged value.
function M.decode(value)
  -- The limit's field is optional: an entry stored before limits existed has none; the
  -- permissions' field too (a client without rules).
  local created, row, is_admin, method, client_id, client_name, rest =
    value:match("^([^\t]+)\t([^\t]+)\t([^\t]+)\t([^\t]+)\t([^\t]*)\t([^\t]*)\t?(.*)$")
  created = tonumber(created)
  if not created then
    return nil
  end
  local limit, perms_text = rest:match("^([^\t]*)\t?([^\t]*)$")
  if not limit then
    return nil
  end
  local perms = permissions.parse(perms_text)
  if perms == false then
    return nil
  end
  return created, {
    row = row,
    is_admin = is_admin,
    method = method,
    client_id = client_id,
    client_name = client_name,
    limit = ratelimit.parse(limit),
    permissions = perms,
  }
end

-- Pure: a decision made at `created` still holds unless a revocation of its client, or of
-- everything, was recorded at or after that moment (ties count as revoked: fail closed).
function M.fresh(created, client_revoked_at, all_revoked_at)
  if client_revoked_at and client_revoked_at >= created then
    return false
  end
  if all_revoked_at and all_revoked_at >= created then
    return false
  end
  return true
end

-- Pure: how long (seconds) a decision made at `now` may be kept; 0 or less: do not keep.
-- `valid_until` is the Unix time its credential stops being valid (a token's exp), or nil.
function M.lifetime(max_age_ms, now, valid_until)
  local lifetime = (tonumber(max_age_ms) or 0) / 1000
  local until_time = tonumber(valid_until)
  if until_time and until_time - now < lifetime then
    lifetime = until_time - now
  end
  return lifetime
end

return M
