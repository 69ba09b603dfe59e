-- Cases for lua/gateway/decision_entry.lua, run inside nginx by test/lua/run.lua.
local case, eq = ...
local decision_entry = require("gateway.decision_entry")
local ratelimit = require("gateway.ratelimit")

local identity = { row = "12", is_admin = "true", method = "apk", client_id = "12", client_name = "Ada%20L" }

case("decision_entry: encode then decode gives back the identity and the time", function()
  local created, back = decision_entry.decode(decision_entry.encode(1700000000.123, identity))
  eq(created, 1700000000.123, "created")
  for k, v in pairs(identity) do
    eq(back[k], v, k)
  end
end)

case("decision_entry: an empty client name survives", function()
  local id = { row = "1", is_admin = "false", method = "bearer", client_id = "sub", client_name = "" }
  local _, back = decision_entry.decode(decision_entry.encode(1, id))
  eq(back.client_name, "", "client_name")
end)

case("decision_entry: a field with a tab is not encoded (never a shifted identity)", function()
  local id = { row = "1", is_admin = "false", method = "apk", client_id = "a\tb", client_name = "x" }
  eq(decision_entry.encode(1, id), nil)
  id.client_id = "\tb"
  eq(decision_entry.encode(1, id), nil, "a tab as the first byte")
end)

case("decision_entry: a missing field is not encoded", function()
  eq(decision_entry.encode(1, { row = "1", is_admin = "false", method = "apk", client_id = "1" }), nil)
end)

case("decision_entry: damaged values decode to nil", function()
  eq(decision_entry.decode("garbage"), nil)
  eq(decision_entry.decode("x\t1\ttrue\tapk\t1\tn"), nil)
  eq(decision_entry.decode("1\t1\ttrue\tapk\t1"), nil)
end)

case("decision_entry.fresh: a revocation at or after the decision kills it; before, it does not", function()
  eq(decision_entry.fresh(100, nil, nil), true, "no marker")
  eq(decision_entry.fresh(100, 99.999, nil), true, "older client marker")
  eq(decision_entry.fresh(100, 100, nil), false, "same instant")
  eq(decision_entry.fresh(100, 100.001, nil), false, "newer client marker")
  eq(decision_entry.fresh(100, nil, 99), true, "older global marker")
  eq(decision_entry.fresh(100, nil, 100), false, "same-instant global marker")
  eq(decision_entry.fresh(100, 50, 150), false, "newer global marker")
end)

case("decision_entry.lifetime: max age, capped by valid_until, never negative use", function()
  eq(decision_entry.lifetime("30000", 1000, nil), 30, "max age")
  eq(decision_entry.lifetime("30000", 1000, "1010"), 10, "exp first")
  eq(decision_entry.lifetime("30000", 1000, "5000"), 30, "max age first")
  eq(decision_entry.lifetime("30000", 1000, "999") <= 0, true, "already expired")
  eq(decision_entry.lifetime("0", 1000, nil), 0, "off")
  eq(decision_entry.lifetime(nil, 1000, nil), 0, "unset")
  eq(decision_entry.lifetime("30000", 1000, "not a number"), 30, "unreadable exp ignored")
end)

case("decision_entry: a decision keeps its rate limit; one stored before limits has none", function()
  local limited = { row = "12", is_admin = "false", method = "apk", client_id = "12",
    client_name = "n", limit = ratelimit.parse("5 60") }
  local _, back = decision_entry.decode(decision_entry.encode(1, limited))
  eq(back.limit.requests, 5, "requests")
  eq(back.limit.per, 60, "per")
  local _, none = decision_entry.decode(decision_entry.encode(1, identity))
  eq(none.limit, nil, "no limit")
  local _, old = decision_entry.decode("1\t12\tfalse\tapk\t12\tn")
  eq(old.client_name, "n", "an entry of six fields decodes")
  eq(old.limit, nil, "without a limit")
end)

case("decision_entry: permissions travel with the decision; damaged ones make the entry damaged", function()
  local permissions = require("gateway.permissions")
  local id = { row = "3", is_admin = "false", method = "bearer", client_id = "s", client_name = "n",
    limit = ratelimit.parse("5 1"), permissions = permissions.parse("1 03/r/**") }
  local value = decision_entry.encode(7, id)
  eq(value, "7.000\t3\tfalse\tbearer\ts\tn\t5 1\t1 03/r/**", "the eighth field")
  local _, back = decision_entry.decode(value)
  eq(back.permissions.text, "1 03/r/**", "rules back")
  eq(back.limit.text, "5 1", "limit back")
  id.limit = nil
  _, back = decision_entry.decode(decision_entry.encode(7, id))
  eq(back.permissions.text, "1 03/r/**", "rules without a limit")
  eq(back.limit, nil, "no limit")
  _, back = decision_entry.decode("7.000\t3\tfalse\tbearer\ts\tn\t")
  eq(back.permissions, nil, "an entry without rules: everything, as before them")
  eq(decision_entry.decode("7.000\t3\tfalse\tbearer\ts\tn\t\tgarbage"), nil, "bad rules: no decision")
  eq(decision_entry.decode("7.000\t3\tfalse\tbearer\ts\tn\t\t1 03/r\tx"), nil, "a ninth field")
end)

-- The nginx module reads the same entry by the contract's field list (generated into its
-- gateway_contract.h): each field is where the contract says.
case("decision_entry: every field at the contract's position (decision_fields), as the module reads it", function()
  local contract = require("gateway.contract")
  local limited = { row = "12", is_admin = "true", method = "apk", client_id = "12",
    client_name = "Ada%20L", limit = ratelimit.parse("5 60"),
    permissions = require("gateway.permissions").parse("1 04/w") }
  local value = decision_entry.encode(1700000000.125, limited)
  local fields = {}
  for field in (value .. "\t"):gmatch("([^\t]*)\t") do
    fields[#fields + 1] = field
  end
  local expected = { created = "1700000000.125", row = "12", is_admin = "true", method = "apk",
    client_id = "12", client_name = "Ada%20L", limit = "5 60", permissions = "1 04/w" }
  eq(#fields, #contract.decision_fields, "field count")
  for i, name in ipairs(contract.decision_fields) do
    eq(fields[i], expected[name], name)
  end
end)
