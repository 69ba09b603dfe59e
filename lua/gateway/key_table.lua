-- The key table's replica: every API client's key record in a shared dict of its own, loaded
-- by the sidecar when the pair starts and kept current by the change feed, with no lifetime
-- (docs/decisions/20261127-key-table-replica.md). While the sidecar keeps saying the feed is
-- live, an id the replica does not hold belongs to nobody; past `trusted_until` (no word from
-- the sidecar for key_table.trust_s) nothing here is used and nginx asks as before.
-- Records are bytes (contract.key_record), never a secret: the hashes are what PostgreSQL stores.
local contract = require("gateway.contract")
local permissions = require("gateway.permissions")
local ratelimit = require("gateway.ratelimit")

local M = {}

local T = contract.key_table
local R = contract.key_record
local dict = ngx.shared[T.dict]
local STATE = T.state
local byte, sub = string.byte, string.sub
local HASH = R.hash_bytes
local F_ADMIN, F_KEY, F_PREVIOUS, F_EXPIRES, F_LIMIT, F_GONE, F_RULES =
  R.flags.admin, R.flags.key, R.flags.previous, R.flags.expires, R.flags.limit, R.flags.gone,
  R.flags.rules
-- What a deleted client's record decodes to: no client has its id (gateway.key_records.verdict).
local GONE = { kind = "unknown" }
local band = require("bit").band
local NEW_ID_BAND = T.new_id_band
local NEW_ID_REACH = T.new_id_reach
local CHANGES = T.changes

-- Whether default.conf declares the replica's dict (one from before it: nginx asks as before).
M.enabled = dict ~= nil

-- A length byte at `at`, then that many bytes of text: its value and where the next field
-- starts, or nil past the value's end. A function of its own, not a closure in decode: a
-- closure made per request (bytecode FNEW) stops LuaJIT from compiling the path.
-- `parse` (tonumber, ratelimit.parse) makes the text a value; nil when it is not one.
local function field(value, at, len, parse)
  local n = byte(value, at)
  if not n or at + n > len then
    return nil, at
  end
  return parse(sub(value, at + 1, at + n)), at + 1 + n
end

-- The 32 bytes of a hash at `at`, and where the next field starts; nil past the value's end.
local function hash_at(value, at, len)
  if at + HASH - 1 > len then
    return nil, at
  end
  return sub(value, at, at + HASH - 1), at + HASH
end

-- Pure: the record `value` of key id `id` as gateway.key_records.verdict reads it, or nil for bytes
-- that are not a record of this format (then the id is left to the sidecar).
function M.decode(value, id)
  local len = #value
  if len < 2 or byte(value, 1) ~= R.version then
    return nil
  end
  local flags = byte(value, 2)
  if band(flags, F_GONE) ~= 0 then
    return GONE
  end
  local at = 3
  local rec = { kind = "known" }
  if band(flags, F_KEY) ~= 0 then
    rec.hash, at = hash_at(value, at, len)
    if not rec.hash then
      return nil
    end
  end
  if band(flags, F_PREVIOUS) ~= 0 then
    rec.previous_hash, at = hash_at(value, at, len)
    if not rec.previous_hash then
      return nil
    end
    rec.previous_until, at = field(value, at, len, tonumber)
    if not rec.previous_until then
      return nil
    end
  end
  if band(flags, F_EXPIRES) ~= 0 then
    rec.expires_at, at = field(value, at, len, tonumber)
    if not rec.expires_at then
      return nil
    end
  end
  local limit = nil
  if band(flags, F_LIMIT) ~= 0 then
    limit, at = field(value, at, len, ratelimit.parse)
    if not limit then
      return nil
    end
  end
  -- The rules: their length as text, then their text (gateway.permissions parses it once).
  local perms = nil
  if band(flags, F_RULES) ~= 0 then
    local n
    n, at = field(value, at, len, tonumber)
    if not n or n < 1 or at + n - 1 > len then
      return nil
    end
    perms = permissions.parse(sub(value, at, at + n - 1))
    if not perms then
      return nil
    end
    at = at + n
  end
  rec.identity = {
    row = id,
    client_id = id,
    client_name = sub(value, at),
    is_admin = band(flags, F_ADMIN) ~= 0 and "true" or "false",
    method = "apk",
    limit = limit,
    permissions = perms,
  }
  return rec
end

-- The state lookups read, kept for one tick of nginx's clock (`now`: the same for every request
-- of one pass of the event loop, as if they had all come at once) instead of four shared-dict
-- reads a request: a flood of guessed ids above the largest id held is then decided from it
-- alone. Any other absence is read afresh before it refuses (a replica dropped by another worker
-- in this tick must not make a held client nobody's); this worker's own changes forget it.
local seen_at, seen_trusted, seen_max, seen_live, seen_full
local function forget()
  seen_at = nil
end

local function read_state(now)
  seen_at = now
  seen_trusted = dict:get(STATE.trusted_until)
  seen_max = dict:get(STATE.max_id)
  seen_live = dict:get(STATE.live_until)
  seen_full = dict:get(STATE.full)
end

-- Whether an absent id is nobody's by the state read at `now`: complete, trusted, live (no
-- notice pending), has held every record it was sent, and the id not within the new-id band of
-- the largest held, below or above (maybe a client created on another pair a moment ago).
local function nobody(n, now)
  if not seen_live or now >= seen_live or seen_full then
    return false
  end
  -- Below the largest held, a creation committed out of id order; above it, creations ahead of
  -- their notice, a bulk import's included: asked about (docs/decisions/20261201-no-change-skipped.md,
  -- 20261202-ids-ahead-of-their-notice.md).
  local max = seen_max or 0
  return n + NEW_ID_BAND < max or n > max + NEW_ID_REACH
end

-- What the replica says of key id `id` at Unix time `now`: the record it holds (a table for
-- gateway.key_records.verdict), or nil and whether that absence means "no client has this id" (true
-- only while the replica is complete, trusted, live and has held every record it was sent, and
-- for an id not just above the largest it holds), and whether it is an absence in a trusted
-- replica.
-- nil, false: the replica cannot tell; ask as before. nil, false, true: trusted, the id absent,
-- but the replica maybe behind (a notice pending, an id near the largest): what was learnt of
-- an unknown id before is no proof either, its creation may be what the replica has not seen
-- (docs/decisions/20261202-ids-ahead-of-their-notice.md).
function M.lookup(id, now)
  if not dict then
    return nil, false
  end
  if seen_at ~= now then
    read_state(now)
  end
  if not seen_trusted or now >= seen_trusted then
    return nil, false
  end
  -- An id above the largest one held is not held (max_id is raised after a record is stored):
  -- no search of the whole table for it, what a flood of guessed ids would cost every request.
  -- No max_id, which a table with records always has: searched, as before.
  local n = tonumber(id)
  if seen_max and n > seen_max then
    return nil, nobody(n, now), true
  end
  local value = dict:get(id)
  if value then
    -- A doubt (a change being read) is no absence: what was learnt since may stand.
    return M.decode(value, id), false
  end
  read_state(now)
  if not seen_trusted or now >= seen_trusted then
    return nil, false
  end
  return nil, nobody(n, now), true
end

-- ---------------------------------------------------------------------------------------------
-- The control socket's side (gateway.control): the sidecar loads and updates the replica.

local warned_full = false

local function state()
  local s = {}
  for name, key in pairs(STATE) do
    s[name] = dict:get(key)
  end
  s.capacity_bytes = dict:capacity()
  s.free_bytes = dict:free_space()
  return s
end

-- GET: the replica's state as JSON-ready data.
function M.state()
  return state()
end

-- GET ?ids=: the records held for `ids` (a list of id texts) as base64, false for an id not
-- held: what a test compares with PostgreSQL record for record (test/e2e/key-table-model).
function M.records(ids)
  local out = {}
  for _, id in ipairs(ids) do
    local value = dict:get(id)
    out[id] = value and ngx.encode_base64(value) or false
  end
  return out
end

-- A new load starting at feed `position`: everything held is dropped (nothing is decided from
-- the replica until the load completes).
function M.load(position)
  forget()
  dict:flush_all()
  dict:flush_expired()
  ngx.update_time()
  -- The nginx module's copies of records are good while this stays as it is: a load starts it
  -- at its second × 10⁶, above anything an earlier load reached (fewer than 10⁶ applies come
  -- in a second), and every apply that changes records adds one (contract.key_table).
  dict:set(STATE.version, math.floor(ngx.now()) * 1000000)
  dict:set(STATE.phase, "loading")
  dict:set(STATE.position, position)
  dict:set(STATE.records, 0)
  dict:set(STATE.loaded_at, ngx.now())
  warned_full = false
end

-- The replica is dropped: nothing held, nothing decided from it.
function M.drop()
  forget()
  dict:flush_all()
  dict:flush_expired()
end

-- Stores the record `bytes` of `id` (nil: deletes it). A record that finds no room is not half
-- kept: the id's old record goes too, and the replica is marked full, so ids it does not hold
-- are asked about again instead of refused.
local function put(id, bytes)
  local existed = dict:get(id) ~= nil
  if not bytes then
    if existed then
      dict:delete(id)
      dict:incr(STATE.records, -1, 0)
    end
    return true
  end
  local ok, err = dict:safe_set(id, bytes)
  if ok then
    if not existed then
      dict:incr(STATE.records, 1, 0)
    end
    local n = tonumber(id)
    if n > (dict:get(STATE.max_id) or 0) then
      dict:set(STATE.max_id, n)
    end
    return true
  end
  if existed then
    dict:delete(id)
    dict:incr(STATE.records, -1, 0)
  end
  if not dict:get(STATE.full) then
    dict:set(STATE.full, true)
  end
  if not warned_full then
    warned_full = true
    ngx.log(ngx.ERR, "the key table is full (", err, "): ", dict:get(STATE.records),
      " records held; ids not held are asked about. Raise key_table.size")
  end
  return false
end

-- Pure: one line of an apply body, "<id> <base64 record>" or "<id>" (a deletion) -> id, bytes
-- (nil for a deletion); nil, "bad" for anything else.
function M.parse_line(line)
  local id, space, encoded = line:match("^([1-9]%d*)( ?)(.*)$")
  if not id or #id > 15 or (space == "") ~= (encoded == "") then
    return nil, "bad"
  end
  if encoded == "" then
    return id, nil
  end
  local bytes = ngx.decode_base64(encoded)
  if not bytes or #bytes < 2 then
    return nil, "bad"
  end
  return id, bytes
end

-- Pure: what the `#changed:` slot of `version` says of `changes` ({ id, bytes } pairs): the
-- version, then each id, or "*" for more ids than a slot holds (contract.key_table.changes).
-- Written with safe_set: a slot that finds no room keeps an older version's text, which the
-- module reads as "cannot tell" and drops every copy, never a record evicted to make room.
function M.changed_text(version, changes)
  local parts = { string.format("%.0f", version) }
  if #changes > CHANGES.ids then
    parts[2] = "*"
  else
    for i = 1, #changes do
      parts[i + 1] = changes[i][1]
    end
  end
  return table.concat(parts, " ")
end

-- Applies `body` (lines, M.parse_line) and sets the replica's `position` (nil: kept); `complete`:
-- the load is done. Trust and liveness move only when the sidecar says so: `renew` (a heartbeat
-- delivered with every change before it applied) renews the trust for `trust_s`; `live_s`
-- (a number) makes an absent id nobody's for that many seconds from now, 0 withdraws it at once
-- (a notice is pending: ids not held are asked about until it is applied). An apply of records
-- alone changes neither (docs/decisions/20261201-no-change-skipped.md).
-- Returns the state, or nil and why ("empty": no load under way or done; "bad": a malformed
-- line, then nothing was applied).
function M.apply(body, position, complete, trust_s, renew, live_s)
  forget()
  local phase = dict:get(STATE.phase)
  if phase ~= "loading" and phase ~= "complete" then
    return nil, "empty"
  end
  local changes = {}
  for line in (body or ""):gmatch("[^\n]+") do
    local id, bytes = M.parse_line(line)
    if not id then
      return nil, "bad"
    end
    changes[#changes + 1] = { id, bytes }
  end
  -- Every change moves the version on once they are all made, even if one failed, and then
  -- says which ids it changed: the nginx module drops its copies of those in each worker (a
  -- copy made meanwhile is made at the old version and goes with them).
  local applied, err = pcall(function()
    for i = 1, #changes do
      put(changes[i][1], changes[i][2])
    end
  end)
  if #changes > 0 then
    local version = dict:incr(STATE.version, 1)
    if version then
      dict:safe_set(CHANGES.prefix .. (version % CHANGES.slots), M.changed_text(version, changes))
    end
  end
  if not applied then
    error(err)
  end
  if position then
    dict:set(STATE.position, position)
  end
  ngx.update_time()
  local now = ngx.now()
  if complete and phase == "loading" then
    dict:set(STATE.phase, "complete")
    dict:set(STATE.load_seconds, now - (dict:get(STATE.loaded_at) or now))
    dict:set(STATE.loaded_at, now)
    phase = "complete"
  end
  if phase == "complete" then
    if renew then
      dict:set(STATE.trusted_until, now + trust_s)
    end
    if live_s then
      dict:set(STATE.live_until, live_s > 0 and now + math.min(live_s, T.live_seconds) or 0)
    end
  end
  return state()
end

return M
