-- The gateway's nginx module's C functions (nginx-module/, contract NGINX_MODULE), found through
-- LuaJIT's ffi when the module is loaded: nginx loads modules with RTLD_GLOBAL, so their
-- exported functions are in ffi.C. Without the module (a main nginx.conf without its
-- load_module line) there are none, and the Lua code decides alone.
local ffi = require("ffi")

local M = {}

-- The function `name` declared by the C declaration `declaration` (which names it), or nil when
-- no loaded module exports it.
function M.find(declaration, name)
  if not pcall(ffi.cdef, declaration) then
    return nil
  end
  local found, fn = pcall(function()
    return ffi.C[name]
  end)
  return found and fn or nil
end

return M
