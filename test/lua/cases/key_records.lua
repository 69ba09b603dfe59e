-- Cases for lua/gateway/key_records.lua, run inside nginx by test/lua/run.lua.
local case, eq = ...
local key_records = require("gateway.key_records")
local sha256 = require("gateway.sha256")

local function record(overrides)
  local rec = { kind = "known", is_admin = "false", client_id = "12", client_name = "Ada%20L",
    hash_hex = string.rep("ab", 32) }
  for k, v in pairs(overrides or {}) do
    rec[k] = v
  end
  return rec
end

case("key_records: encode then decode gives back the record, hashes as raw bytes", function()
  local created, back = key_records.decode(key_records.encode(1700000000.5, record({
    previous_hash_hex = string.rep("cd", 32), previous_until = "1700000100.250", expires_at = "1800000000",
  })), "12")
  eq(created, 1700000000.5, "created")
  eq(back.kind, "known", "kind")
  eq(back.hash, string.rep("\171", 32), "hash")
  eq(back.previous_hash, string.rep("\205", 32), "previous hash")
  eq(back.previous_until, 1700000100.25, "previous until")
  eq(back.expires_at, 1800000000, "expires at")
  eq(back.identity.row, "12", "row")
  eq(back.identity.client_name, "Ada%20L", "name")
  eq(back.identity.method, "apk", "method")
  local _, unknown = key_records.decode(key_records.encode(1, { kind = "unknown" }), "5")
  eq(unknown.kind, "unknown", "unknown")
  eq(key_records.decode("garbage", "1"), nil, "damaged")
  eq(key_records.encode(1, record({ client_name = "a\tb" })), nil, "a tab cannot be stored")
end)

case("key_records: the verdict of a secret's digest, as the sidecar decides", function()
  local right, old, wrong = sha256.digest("right"), sha256.digest("old"), sha256.digest("wrong")
  local rec = { kind = "known", hash = right, previous_hash = old, previous_until = 100 }
  eq(key_records.verdict(rec, right, 50), "pass", "current")
  eq(key_records.verdict(rec, old, 99.9), "pass", "previous during its grace")
  eq(key_records.verdict(rec, old, 100), "stale", "previous at its grace end: stale, not a guess")
  eq(key_records.verdict(rec, wrong, 50), "wrong", "wrong")
  rec.expires_at = 60
  eq(key_records.verdict(rec, right, 59), "pass", "before expiry")
  eq(key_records.verdict(rec, right, 60), "expired", "right secret at expiry")
  eq(key_records.verdict(rec, wrong, 60), "wrong", "a wrong secret learns nothing of the expiry")
  eq(key_records.verdict({ kind = "known" }, right, 1), "wrong", "a client without a key")
  eq(key_records.verdict({ kind = "unknown" }, right, 1), "unknown", "no such id")
end)

case("key_records: from_answer keeps only a well-formed record about the id asked for", function()
  local h = {
    ["x-gateway-key-record"] = "known", ["x-gateway-client-row"] = "12", ["x-client-id"] = "12",
    ["x-client-name"] = "Ada", ["x-client-is-admin"] = "false", ["x-gateway-key-hash"] = string.rep("ab", 32),
  }
  eq(key_records.from_answer(h, "12").hash_hex, string.rep("ab", 32), "kept")
  eq(key_records.from_answer(h, "13"), nil, "about another id")
  h["x-gateway-key-hash"] = "nothex"
  eq(key_records.from_answer(h, "12"), nil, "bad hash")
  h["x-gateway-key-hash"] = nil
  eq(key_records.from_answer(h, "12").kind, "known", "no key at all")
  h["x-gateway-previous-key-hash"] = string.rep("cd", 32)
  eq(key_records.from_answer(h, "12"), nil, "a previous hash without its grace end")
  h["x-gateway-previous-key-until"] = "17x"
  eq(key_records.from_answer(h, "12"), nil, "a grace end that is no number")
  h["x-gateway-previous-key-until"] = "1700000000.5"
  eq(key_records.from_answer(h, "12").previous_until, 1700000000.5, "with its grace end")
  eq(key_records.from_answer(h, "12").previous_hash, string.rep("\205", 32), "raw as well as hex")
  h["x-client-is-admin"] = "yes"
  eq(key_records.from_answer(h, "12"), nil, "bad admin flag")
  eq(key_records.from_answer({ ["x-gateway-key-record"] = "unknown", ["x-gateway-client-row"] = "9" }, "9").kind,
    "unknown", "unknown id")
  eq(key_records.from_answer({ ["x-gateway-client-row"] = "9" }, "9"), nil, "no record at all")
end)

case("key_records: a record keeps its rate limit, from the answer to the stored value", function()
  local h = {
    ["x-gateway-key-record"] = "known", ["x-gateway-client-row"] = "12", ["x-client-id"] = "12",
    ["x-client-name"] = "Ada", ["x-client-is-admin"] = "false", ["x-gateway-rate-limit"] = "7 2",
  }
  local rec = key_records.from_answer(h, "12")
  eq(rec.limit.requests, 7, "from the answer")
  local _, back = key_records.decode(key_records.encode(1, rec), "12")
  eq(back.identity.limit.requests, 7, "stored and read back")
  eq(back.identity.limit.per, 2, "per")
  h["x-gateway-rate-limit"] = nil
  local _, none = key_records.decode(key_records.encode(1, key_records.from_answer(h, "12")), "12")
  eq(none.identity.limit, nil, "none")
end)

case("key_records: permissions travel with a learnt record; bad ones keep no record", function()
  local permissions = require("gateway.permissions")
  local rec = { kind = "known", is_admin = "false", client_id = "4", client_name = "n",
    permissions = permissions.parse("1 04/w") }
  local value = key_records.encode(9, rec)
  local _, back = key_records.decode(value, "4")
  eq(back.identity.permissions.text, "1 04/w", "rules back")
  rec.permissions = nil
  _, back = key_records.decode(key_records.encode(9, rec), "4")
  eq(back.identity.permissions, nil, "none: everything")
  eq(key_records.decode(key_records.encode(9, rec) .. "\tgarbage", "4"), nil, "bad rules")
end)

-- The nginx module reads the same record by the contract's field list (generated into its
-- gateway_contract.h): each field is where the contract says.
case("key_records: every field at the contract's position (learnt_key_fields), as the module reads it", function()
  local contract = require("gateway.contract")
  local value = key_records.encode(1700000000.5, record({
    previous_hash_hex = string.rep("cd", 32), previous_until = "1700000100.250",
    expires_at = "1800000000", is_admin = "true",
    permissions = require("gateway.permissions").parse("1 04/w"),
  }))
  local fields = {}
  for field in (value .. "\t"):gmatch("([^\t]*)\t") do
    fields[#fields + 1] = field
  end
  local expected = {
    created = "1700000000.500", kind = "known", expires_at = "1800000000",
    previous_until = "1700000100.250", is_admin = "true", client_id = "12",
    client_name = "Ada%20L", hash = string.rep("ab", 32), previous_hash = string.rep("cd", 32),
    limit = "", permissions = "1 04/w",
  }
  eq(#fields, #contract.learnt_key_fields, "field count")
  for i, name in ipairs(contract.learnt_key_fields) do
    eq(fields[i], expected[name], name)
  end
end)
