-- The decision cache in shared memory: "yes" answers only, keyed by decision_key.key. Revocation
-- works by markers, not by finding entries (their keys are hashes of credentials we do not
-- keep): a marker records when a client (or everything) was revoked, and an entry made before
-- its client's latest marker is dead. Markers live in their own dict with safe_set, so the
-- decisions' eviction never takes a marker away while an entry it concerns can still exist.
local contract = require("gateway.contract")
local decision_entry = require("gateway.decision_entry")
local lrucache = require("resty.lrucache")
local metrics = require("gateway.metrics")

local M = {}

local decisions = ngx.shared[contract.dicts.decisions]
local revocations = ngx.shared[contract.dicts.revocations]

local ALL = "*"
-- Each worker keeps recently used decisions decoded, for no longer than the shared entry lives,
-- so a hit reads the two revocation markers only. A revoked or expired decision is dead for
-- this copy exactly as for the shared one (same markers, same lifetime).
local decoded = assert(lrucache.new(4096))
-- The longest lifetime any entry was given: markers must outlive every entry they concern.
local LONGEST = "longest"

-- The identity kept for `key`, or nil (absent, expired, damaged or revoked).
function M.get(key)
  local item = decoded:get(key)
  if not item then
    local value = decisions:get(key)
    if not value then
      return nil
    end
    local created, identity = decision_entry.decode(value)
    if not created then
      decisions:delete(key)
      return nil
    end
    local ttl = decisions:ttl(key)
    item = { created = created, identity = identity }
    if ttl and ttl > 0 then
      decoded:set(key, item, ttl)
    end
  end
  if not M.alive(item.created, item.identity.row) then
    decoded:delete(key)
    decisions:delete(key)
    return nil
  end
  return item.identity
end

-- Whether something learnt about client `row` at `created` still holds: no revocation of that
-- client, or of everything, since. Key records (gateway.key_records) share the markers.
function M.alive(created, row)
  return decision_entry.fresh(created, revocations:get(row), revocations:get(ALL))
end

-- Before anything is kept for `lifetime` seconds: markers must outlive it.
function M.note_lifetime(lifetime)
  local longest = revocations:get(LONGEST)
  if not longest or longest < lifetime then
    revocations:set(LONGEST, lifetime)
  end
end

-- Stores `value` in `dict` for `lifetime` seconds, counting evictions and failures. Only
-- through M.keep, which notes the lifetime first.
local function store(dict, key, value, lifetime)
  local ok, _, forcible = dict:set(key, value, lifetime)
  local counts = metrics.counts
  if not ok then
    counts.cache_store_failed = counts.cache_store_failed + 1
  elseif forcible then
    -- Room was made by evicting unexpired decisions: the cache is smaller than the traffic.
    counts.cache_eviction = counts.cache_eviction + 1
  end
end

-- Stores `value`, the answer to a question about client `row` asked at `created`, in `dict`
-- until `created + lifetime`, however long the answer took. Two rules keep a revocation from
-- being outlived by an answer that was in flight when it came:
-- * an answer some marker already makes dead (`still`: M.alive or M.unknown_alive) is not
--   stored at all: a marker lives the longest lifetime noted when it is set plus a second, and
--   this answer's lifetime may be longer (max_age_ms raised by a reload meanwhile) or end later
--   (an answer arriving more than that second after the marker);
-- * the lifetime is noted before that check, so a marker set after it outlives the entry.
-- Counted from the store, an answer held past a delete made the deleted key pass again once
-- the marker ended (docs/decisions/20261127-lifetime-from-the-question.md).
function M.keep(dict, key, value, created, lifetime, row, still)
  M.note_lifetime(lifetime)
  if not still(created, row) then
    return
  end
  local remaining = lifetime - (ngx.now() - created)
  -- Not below the dict's millisecond resolution: an exptime of 0 would mean "never expires".
  if remaining < 0.001 then
    return
  end
  store(dict, key, value, remaining)
end

-- Keeps a decision made at `created` for `lifetime` seconds from then. Eviction of older
-- entries when the dict is full is fine (they are only answers we can ask for again).
function M.put(key, identity, created, lifetime)
  if lifetime <= 0 then
    return
  end
  local value = decision_entry.encode(created, identity)
  if value then
    M.keep(decisions, key, value, created, lifetime, identity.row, M.alive)
  end
end

-- How long a marker must live: past the longest entry, plus a second for requests in flight.
-- Before any entry was stored, the largest lifetime the settings allow.
local function marker_ttl(fallback_s)
  return (revocations:get(LONGEST) or fallback_s) + 1
end

-- Everything decided before now is dead: decisions and key records alike.
function M.invalidate_all()
  ngx.update_time()
  local now = ngx.now()
  local ok = revocations:safe_set(ALL, now)
  if not ok then
    local longest = revocations:get(LONGEST)
    revocations:flush_all()
    revocations:set(ALL, now)
    if longest then
      revocations:set(LONGEST, longest)
    end
  end
  decisions:flush_all()
  local keys = ngx.shared[contract.dicts.keys]
  if keys then
    keys:flush_all()
  end
end

-- Client `row` was created: anything that says its id belongs to nobody, learnt before now, is
-- dead (gateway.key_records reads it for unknown records only, so what was learnt about the new
-- client itself stays). The marker has a key of its own ("c" and the row: never a row's, never
-- read by the nginx module) and lives as long as an unknown record can, `lifetime_s`.
local function created_key(row)
  return "c" .. row
end

function M.created(row, lifetime_s, fallback_s)
  ngx.update_time()
  local ok, err = revocations:safe_set(created_key(row), ngx.now(), lifetime_s + 1)
  if not ok then
    -- No room: the stronger marker, as a change of the client would set.
    ngx.log(ngx.WARN, "revocation markers full (", err, "); invalidating client ", row)
    M.invalidate(row, fallback_s)
  end
end

-- Whether "no client has id `row`", learnt at `created`, still holds: no creation of that
-- client since, and every marker `alive` reads.
function M.unknown_alive(created, row)
  return M.alive(created, row) and decision_entry.fresh(created, revocations:get(created_key(row)))
end

-- Every decision about client `row` made before now is dead.
function M.invalidate(row, fallback_s)
  ngx.update_time()
  local ok, err = revocations:safe_set(row, ngx.now(), marker_ttl(fallback_s))
  if not ok then
    -- No room for one more marker: revoke everything rather than lose this one.
    ngx.log(ngx.WARN, "revocation markers full (", err, "); invalidating every decision")
    M.invalidate_all()
  end
end

return M
