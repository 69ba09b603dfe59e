-- Unit cases for the pure parts of lua/gateway, run inside nginx (the real LuaJIT and ngx API)
-- by lua.test.ts: one file of cases per module (cases/<module path>.lua), each a chunk called with
-- `case` and `eq`. Each case returns nothing on success and raises on failure.
local cases = {}
local function case(name, fn)
  cases[#cases + 1] = { name = name, fn = fn }
end
local function eq(actual, expected, what)
  if actual ~= expected then
    error((what or "value") .. ": expected " .. tostring(expected) .. ", got " .. tostring(actual), 2)
  end
end

-- `files`: the case files' paths, run in this order.
return function(files)
  for i = 1, #files do
    assert(loadfile(files[i]))(case, eq)
  end
  local results = {}
  for i = 1, #cases do
    local ok, err = pcall(cases[i].fn)
    results[#results + 1] = { name = cases[i].name, ok = ok, error = ok and nil or tostring(err) }
  end
  return results
end
