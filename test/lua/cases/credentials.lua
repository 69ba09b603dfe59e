-- Cases for lua/gateway/credentials.lua, run inside nginx by test/lua/run.lua.
local case, eq = ...
local credentials = require("gateway.credentials")

local SECRET = string.rep("Ab0_-", 8) .. "xyz" -- 43 characters

case("credentials: parse_api_key takes only the issued shape of a key", function()
  local id, secret = credentials.parse_api_key("apk 12." .. SECRET)
  eq(id, "12", "id")
  eq(secret, SECRET, "secret")
  eq((credentials.parse_api_key("APK  7." .. SECRET)), "7", "scheme in any case, several spaces")
  eq(credentials.parse_api_key("apk 012." .. SECRET), nil, "leading zero")
  eq(credentials.parse_api_key("apk " .. string.rep("9", 16) .. "." .. SECRET), nil, "16-digit id")
  eq((credentials.parse_api_key("apk " .. string.rep("9", 15) .. "." .. SECRET)), string.rep("9", 15), "15 digits")
  eq(credentials.parse_api_key("apk 1." .. SECRET:sub(2)), nil, "42 characters")
  eq(credentials.parse_api_key("apk 1." .. SECRET .. "x"), nil, "44 characters")
  eq(credentials.parse_api_key("apk 1." .. SECRET .. "\n"), nil, "a line feed after it")
  eq(credentials.parse_api_key("apk 1." .. SECRET:sub(2) .. "="), nil, "not base64url")
  eq(credentials.parse_api_key("apkx 1." .. SECRET), nil, "another scheme")
  eq(credentials.parse_api_key("Bearer 1." .. SECRET), nil, "bearer")
  eq(credentials.parse_api_key("apk\t1." .. SECRET), nil, "a tab for the space")
  eq(credentials.parse_api_key("apk1." .. SECRET), nil, "no space")
  eq(credentials.parse_api_key(" apk 1." .. SECRET), nil, "a space before")
  eq(credentials.parse_api_key("apk 1x." .. SECRET), nil, "a letter in the id")
  eq(credentials.parse_api_key("apk ." .. SECRET), nil, "no id")
  eq(credentials.parse_api_key("apk 1" .. SECRET), nil, "no dot")
  eq(credentials.parse_api_key("apk 1.2." .. SECRET:sub(3)), nil, "a second dot")
  eq(credentials.parse_api_key("apk"), nil, "the scheme alone")
  eq(credentials.parse_api_key(""), nil, "nothing")
  eq(credentials.parse_api_key("@PK 1." .. SECRET), nil, "a byte that is a letter only with bit 5 set")
end)

-- The PCRE form the parser replaced (ngx.re.match, as it was), as the reference.
local REFERENCE = [[^[Aa][Pp][Kk] +([1-9][0-9]{0,14})\.([A-Za-z0-9_-]{43})\z]]
local function reference(credential)
  local m = ngx.re.match(credential, REFERENCE, "jo")
  if not m then
    return nil
  end
  return m[1], m[2]
end

case("credentials: parse_api_key agrees with the PCRE form on random text near the shape", function()
  math.randomseed(20261128)
  local pieces = { "apk", "APK", "aPk", "@pk", "apK", " ", "  ", "\t", "1", "0", "9", "12", "123456789012345",
    "1234567890123456", ".", "..", "-", "_", "=", "+", "/", "A", "z", "\n", "\0", "\255", SECRET,
    SECRET:sub(2), SECRET .. "x" }
  local agreed = 0
  for _ = 1, 20000 do
    local parts = {}
    -- Mostly near the shape: "apk" + spaces + id + "." + secret, with a piece swapped or added.
    local shape = { "apk", " ", tostring(math.random(1, 999999)), ".", SECRET }
    for i = 1, #shape do
      local r = math.random(10)
      if r == 1 then
        parts[#parts + 1] = pieces[math.random(#pieces)]
      elseif r ~= 2 then
        parts[#parts + 1] = shape[i]
      end
      if math.random(12) == 1 then
        parts[#parts + 1] = pieces[math.random(#pieces)]
      end
    end
    local text = table.concat(parts)
    local id, secret = credentials.parse_api_key(text)
    local rid, rsecret = reference(text)
    eq(id, rid, "id of " .. text)
    eq(secret, rsecret, "secret of " .. text)
    if rid then
      agreed = agreed + 1
    end
  end
  -- Both kinds were seen: keys taken, and texts refused.
  eq(agreed > 1000 and agreed < 19000, true, "a mix (" .. agreed .. " keys)")
end)
