-- Runs once in nginx's master (init_by_lua), before the workers fork: the hashing secret is
-- made here so that every worker shares it, and every module is loaded here so that workers,
-- which run as an unprivileged user, never need to read the Lua sources themselves.
local M = {}

function M.master()
  require("gateway.keying").init()
  require("gateway.access")
  require("gateway.budget")
  require("gateway.keys")
  require("gateway.control")
  require("gateway.console")
  require("gateway.metrics")
end

return M
