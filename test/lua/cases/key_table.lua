-- Cases for lua/gateway/key_table.lua's pure parts, run inside nginx by test/lua/run.lua. The
-- bytes are built as sidecar/replica/key-record-bytes.ts writes them (common/contract/key-table.ts
-- KEY_RECORD); test/unit/replica/key-record-bytes.test.ts pins the writer to the same bytes.
local case, eq = ...
local key_table = require("gateway.key_table")

local H1, H2 = string.rep("\1", 32), string.rep("\2", 32)
local function len(text)
  return string.char(#text) .. text
end

case("key_table: a record with every field decodes as key_records.verdict reads it", function()
  -- version 1; flags admin 1 + key 2 + previous 4 + expires 8 + limit 16
  local value = "\1" .. string.char(31) .. H1 .. H2 .. len("1700000100.250") .. len("1800000000.000")
    .. len("100 60") .. "Ada%20L"
  local rec = key_table.decode(value, "12")
  eq(rec.kind, "known", "kind")
  eq(rec.hash, H1, "hash")
  eq(rec.previous_hash, H2, "previous hash")
  eq(rec.previous_until, 1700000100.25, "previous until")
  eq(rec.expires_at, 1800000000, "expires at")
  eq(rec.identity.row, "12", "row")
  eq(rec.identity.client_id, "12", "client id")
  eq(rec.identity.client_name, "Ada%20L", "name")
  eq(rec.identity.is_admin, "true", "admin")
  eq(rec.identity.method, "apk", "method")
  eq(rec.identity.limit.requests, 100, "limit")
end)

case("key_table: a plain client is its flags, its hash and its name", function()
  local rec = key_table.decode("\1\2" .. H1 .. "n", "7")
  eq(rec.hash, H1, "hash")
  eq(rec.previous_hash, nil, "no previous")
  eq(rec.expires_at, nil, "no expiry")
  eq(rec.identity.is_admin, "false", "not admin")
  eq(rec.identity.limit, nil, "no limit")
  eq(rec.identity.client_name, "n", "name")
  -- no key at all: every secret is wrong (key_records.verdict finds no hash)
  eq(key_table.decode("\1\0" .. "x", "7").hash, nil, "a client without a key")
end)

case("key_table: damaged bytes are no record", function()
  eq(key_table.decode("", "1"), nil, "empty")
  eq(key_table.decode("\2\2" .. H1, "1"), nil, "another format")
  eq(key_table.decode("\1\2" .. string.rep("\1", 31), "1"), nil, "a short hash")
  eq(key_table.decode("\1\8" .. string.char(20) .. "123", "1"), nil, "a field past the end")
  eq(key_table.decode("\1\8" .. len("soon"), "1"), nil, "an expiry that is not a number")
  eq(key_table.decode("\1\16" .. len("0 60"), "1"), nil, "a limit that is not one")
end)

case("key_table: an apply line is an id and a record, or an id alone (a deletion)", function()
  local id, bytes = key_table.parse_line("42 " .. ngx.encode_base64("\1\2" .. H1 .. "n"))
  eq(id, "42", "id")
  eq(bytes, "\1\2" .. H1 .. "n", "bytes")
  id, bytes = key_table.parse_line("42")
  eq(id, "42", "deleted id")
  eq(bytes, nil, "no bytes")
  eq(key_table.parse_line("042 AQI="), nil, "a leading zero")
  eq(key_table.parse_line("1234567890123456"), nil, "16 digits")
  eq(key_table.parse_line("42 "), nil, "a space and nothing")
  eq(key_table.parse_line("42AQI="), nil, "no space")
  eq(key_table.parse_line("42 !!!!"), nil, "not base64")
  eq(key_table.parse_line("x 1"), nil, "not an id")
end)

case("key_table: a deleted client's record says no client has its id", function()
  eq(key_table.decode("\1" .. string.char(32), "9").kind, "unknown", "gone")
end)

case("key_table: a record with rules carries them to the identity; bad rules are no record", function()
  local rules = "1 03/r/**"
  -- version 1; flags key 2 + rules 64
  local value = "\1" .. string.char(66) .. H1 .. len(tostring(#rules)) .. rules .. "n"
  local rec = key_table.decode(value, "12")
  eq(rec.identity.permissions.n, 1, "rules")
  eq(rec.identity.permissions.text, rules, "text")
  eq(rec.identity.client_name, "n", "name after the rules")
  eq(key_table.decode("\1" .. string.char(66) .. H1 .. len("3") .. "1 03/r/**n", "12"), nil,
    "rules that are not PERMISSIONS_TEXT")
  eq(key_table.decode("\1" .. string.char(66) .. H1 .. len("99") .. rules, "12"), nil,
    "a length past the end")
  eq(key_table.decode("\1" .. string.char(2) .. H1 .. "n", "12").identity.permissions, nil,
    "no rules flag: everything")
end)

case("key_table: a change's slot names its version and its ids, or * past a slot's ids", function()
  local contract = require("gateway.contract")
  local version = 1764400000 * 1000000 + 7
  eq(key_table.changed_text(version, { { "12" }, { "900", "bytes" } }), "1764400000000007 12 900",
    "ids, deletions and stores alike, the version whole (not 1.76e+15)")
  eq(key_table.changed_text(version, {}), "1764400000000007", "no id")
  local many = {}
  for i = 1, contract.key_table.changes.ids do
    many[i] = { tostring(i) }
  end
  eq(#key_table.changed_text(version, many) > 20, true, "as many ids as a slot holds: listed")
  many[#many + 1] = { "99" }
  eq(key_table.changed_text(version, many), "1764400000000007 *", "one more: every copy goes")
end)
