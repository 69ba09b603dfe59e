-- Cases for lua/gateway/sha256.lua, run inside nginx by test/lua/run.lua.
local case, eq = ...
local sha256 = require("gateway.sha256")

local function hex(raw)
  return (raw:gsub(".", function(c)
    return string.format("%02x", c:byte())
  end))
end

case("sha256: digests match FIPS 180-2's examples", function()
  eq(hex(sha256.digest("abc")), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad", "abc")
  eq(hex(sha256.digest("")), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", "empty")
  eq(hex(sha256.digest(string.rep("a", 1000))), "41edece42d63e8d9bf515a9ba6932e1c20cbc9f5a5d134645adb5db1b9737ea3", "two blocks and more")
end)

case("sha256: HMAC matches RFC 4231 (test cases 1 and 2), again after a second use", function()
  sha256.set_hmac_key("Jefe")
  local want = "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
  eq(hex(sha256.hmac("what do ya want for nothing?")), want, "case 2")
  eq(hex(sha256.hmac("what do ya want for nothing?")), want, "case 2 again (state reset)")
  sha256.set_hmac_key(string.rep("\11", 20))
  eq(hex(sha256.hmac("Hi There")), "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7", "case 1")
end)

case("sha256: from_hex takes 64 lower-case digits only", function()
  eq(sha256.from_hex(string.rep("ab", 32)), string.rep("\171", 32), "decoded")
  eq(sha256.from_hex(string.rep("AB", 32)), nil, "upper case")
  eq(sha256.from_hex("ab"), nil, "short")
  eq(sha256.from_hex(nil), nil, "absent")
end)
