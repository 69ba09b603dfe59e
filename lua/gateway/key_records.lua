-- Key records: API key id -> what nginx needs to decide any request for that id by itself, right
-- secret or wrong: the SHA-256 of the client's secret (and of a rotated-out one with its grace
-- end), its identity and expiry, or "no client has this id". Filled from the sidecar's answer
-- (M.learn), dropped by the same revocation markers as decisions
-- (gateway.cache), never holding a secret: the hashes are what PostgreSQL stores.
local cache = require("gateway.cache")
local contract = require("gateway.contract")
local lrucache = require("resty.lrucache")
local permissions = require("gateway.permissions")
local ratelimit = require("gateway.ratelimit")
local sha256 = require("gateway.sha256")

local M = {}

local records = ngx.shared[contract.dicts.keys]
-- Each worker keeps recently used records decoded (hashes as raw bytes), for no longer than the
-- shared entry lives; the markers are read on every use all the same.
local decoded = assert(lrucache.new(4096))

local TAB = "\t"
-- "No client has this id" is kept at most this long, whatever max_age_ms says: a creation's
-- notice ends it at once (gateway.cache.created), and this bounds what a lost notice costs.
M.UNKNOWN_LIFETIME_S = 10
local NUMBER_OR_EMPTY = "^%d*%.?%d*$"

local function text(value)
  return value and tostring(value) or ""
end

-- Pure: one string for the shared dict. Returns nil when a field could break the format.
--   created TAB kind TAB expires_at TAB previous_until TAB is_admin TAB client_id TAB
--   client_name TAB hash TAB previous_hash [TAB rate limit [TAB permissions]]
-- (hashes in hex; absent fields empty; the rate limit, gateway.ratelimit, absent in a record
-- stored before limits existed; the permissions, gateway.permissions, absent for a client
-- without rules; the nginx module checks them as gateway.permissions does)
function M.encode(created, rec)
  local fields = {
    string.format("%.3f", created),
    rec.kind,
    text(rec.expires_at),
    text(rec.previous_until),
    text(rec.is_admin),
    text(rec.client_id),
    text(rec.client_name),
    text(rec.hash_hex),
    text(rec.previous_hash_hex),
    rec.limit and rec.limit.text or "",
  }
  if rec.permissions then
    fields[#fields + 1] = rec.permissions.text
  end
  for i = 2, #fields do
    if fields[i]:find(TAB, 1, true) then
      return nil
    end
  end
  return table.concat(fields, TAB)
end

-- Pure: created (number) and the record with raw hashes, or nil for a damaged value.
function M.decode(value, row)
  local created, kind, expires_at, previous_until, is_admin, client_id, client_name, hash_hex,
    previous_hex, rest = value:match(
      "^([^\t]+)\t([^\t]+)\t([^\t]*)\t([^\t]*)\t([^\t]*)\t([^\t]*)\t([^\t]*)\t([^\t]*)\t([^\t]*)\t?(.*)$")
  created = tonumber(created)
  if not created then
    return nil
  end
  local limit, perms_text = rest:match("^([^\t]*)\t?([^\t]*)$")
  local perms = permissions.parse(perms_text)
  if not limit or perms == false then
    return nil
  end
  if kind == "unknown" then
    return created, { kind = kind }
  end
  if kind ~= "known" or (is_admin ~= "true" and is_admin ~= "false") or client_id == "" then
    return nil
  end
  local hash = hash_hex ~= "" and sha256.from_hex(hash_hex) or nil
  local previous = previous_hex ~= "" and sha256.from_hex(previous_hex) or nil
  if (hash_hex ~= "" and not hash) or (previous_hex ~= "" and not previous) then
    return nil
  end
  return created, {
    kind = kind,
    hash = hash,
    previous_hash = previous,
    previous_until = tonumber(previous_until),
    expires_at = tonumber(expires_at),
    identity = {
      row = row,
      client_id = client_id,
      client_name = client_name,
      is_admin = is_admin,
      method = "apk",
      limit = ratelimit.parse(limit),
      permissions = perms,
    },
  }
end

-- Pure: what a secret whose SHA-256 is `digest` gets from `rec` at Unix time `now`: "pass",
-- "expired" (the right secret of an expired client), "stale" (a rotated-out secret past its
-- grace), "wrong" or "unknown". The caller hears what the sidecar would say: a stale secret is
-- INVALID_API_KEY, and any secret but the current one is refused whatever the client's state,
-- so a guess learns nothing. "expired" and "stale" come from someone who held a real secret:
-- they spend no failure budget.
function M.verdict(rec, digest, now)
  if rec.kind == "unknown" then
    return "unknown"
  end
  local right = rec.hash ~= nil and digest == rec.hash
  if not right and rec.previous_hash ~= nil and digest == rec.previous_hash then
    if rec.previous_until ~= nil and now < rec.previous_until then
      right = true
    else
      return "stale"
    end
  end
  if not right then
    return "wrong"
  end
  if rec.expires_at and now >= rec.expires_at then
    return "expired"
  end
  return "pass"
end

-- Pure: the record in the sidecar's answer headers (lower-case names), or nil when the answer
-- carries none or a malformed one (then nothing is kept; the answer itself still counts).
local D = contract.decision
local RECORD, ROW = D.key_record:lower(), D.client_row:lower()
local HASH, PREVIOUS, UNTIL = D.key_hash:lower(), D.previous_key_hash:lower(),
  D.previous_key_until:lower()
local EXPIRES = D.expires_at:lower()
local RATE_LIMIT = D.rate_limit:lower()
local PERMISSIONS = D.permissions:lower()
local ID, NAME, ADMIN = contract.identity_headers.client_id:lower(),
  contract.identity_headers.client_name:lower(), contract.identity_headers.is_admin:lower()

function M.from_answer(header, key_id)
  local kind = header[RECORD]
  -- The record must be about the id the caller named, or it is not kept.
  if header[ROW] ~= key_id then
    return nil
  end
  if kind == "unknown" then
    return { kind = kind }
  end
  if kind ~= "known" then
    return nil
  end
  local rec = {
    kind = kind,
    hash_hex = header[HASH],
    previous_hash_hex = header[PREVIOUS],
    previous_until = header[UNTIL],
    expires_at = header[EXPIRES],
    is_admin = header[ADMIN],
    client_id = header[ID],
    client_name = header[NAME] or "",
    limit = ratelimit.parse(header[RATE_LIMIT]),
    permissions = permissions.parse(header[PERMISSIONS]),
  }
  -- Rules that do not parse: no record is kept (never one that allows everything).
  if rec.permissions == false then
    return nil
  end
  for _, field in ipairs({ "previous_until", "expires_at" }) do
    local v = rec[field]
    if v ~= nil and (type(v) ~= "string" or not v:find(NUMBER_OR_EMPTY) or not tonumber(v)) then
      return nil
    end
  end
  -- Raw as well as hex: the answer's own verdict is read from it before it is stored.
  for raw, hex in pairs({ hash = "hash_hex", previous_hash = "previous_hash_hex" }) do
    if rec[hex] ~= nil then
      rec[raw] = sha256.from_hex(rec[hex])
      if not rec[raw] then
        return nil
      end
    end
  end
  if (rec.previous_hash_hex == nil) ~= (rec.previous_until == nil) then
    return nil
  end
  if type(rec.client_id) ~= "string" or type(rec.client_name) ~= "string"
      or (rec.is_admin ~= "true" and rec.is_admin ~= "false") then
    return nil
  end
  rec.previous_until = tonumber(rec.previous_until)
  rec.expires_at = tonumber(rec.expires_at)
  return rec
end

-- Which markers end `rec`: a creation's (gateway.cache.created) ends only "unknown" records.
-- The function to call with (learnt at, id).
local function liveness(rec)
  return rec.kind == "unknown" and cache.unknown_alive or cache.alive
end

-- The record kept for key id `id` (a string of digits), or nil (absent, expired, damaged or
-- revoked since it was learnt).
function M.get(id)
  -- A default.conf from before the key records (no shared dict for them): none, as before.
  if not records then
    return nil
  end
  local item = decoded:get(id)
  if item then
    if liveness(item.rec)(item.created, id) then
      return item.rec
    end
    -- Dead here; the shared dict may hold a newer one another worker learnt since.
    decoded:delete(id)
  end
  local value = records:get(id)
  if not value then
    return nil
  end
  local created, rec = M.decode(value, id)
  if not created or not liveness(rec)(created, id) then
    records:delete(id)
    return nil
  end
  rec.learnt_at = created
  local ttl = records:ttl(id)
  if ttl and ttl > 0 then
    decoded:set(id, { created = created, rec = rec }, ttl)
  end
  return rec
end

-- True for the one caller (across workers) that may refresh the record of `id` now; the claim
-- lapses after `seconds` so a refresh that never came back is tried again.
function M.claim_refresh(id, seconds)
  return records ~= nil and records:add("refresh " .. id, true, seconds) == true
end

-- Keeps `rec` (from M.from_answer), learnt from a question asked at `created`, for `lifetime` s
-- from then (gateway.cache.keep).
function M.put(id, rec, created, lifetime)
  if lifetime <= 0 or not records then
    return
  end
  local value = M.encode(created, rec)
  if value then
    cache.keep(records, id, value, created, lifetime, id, liveness(rec))
  end
end

-- Keeps the record of `key_id` from the sidecar's answer `res` to a question asked at
-- `asked_at`, for the lifetime the settings give (an unknown id's at most
-- M.UNKNOWN_LIFETIME_S). Returns the record, or nil when the answer carries none. Both the
-- access phase and the background refresh (gateway.sidecar.ask) learn this way.
function M.learn(key_id, res, asked_at, max_age_ms)
  local status = res.status
  if status ~= 401 and (status < 200 or status >= 300) then
    return nil
  end
  local rec = M.from_answer(res.header, key_id)
  if rec then
    local lifetime = max_age_ms / 1000
    if rec.kind == "unknown" then
      lifetime = math.min(lifetime, M.UNKNOWN_LIFETIME_S)
    end
    M.put(key_id, rec, asked_at, lifetime)
  end
  return rec
end

return M
