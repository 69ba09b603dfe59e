-- Runs once in nginx's master (init_by_lua), before the workers fork: the hashing secret is
-- made here so that every worker shares it, and every module is loaded here so that workers,
-- which run as an unprivileged user, never need to read the Lua sources themselves.
-- `proof_file`: nginx's proof for the sidecar (gateway.proof); `sidecar`: the sidecar's address
-- when it is a DNS name, resolved here for the one-hop asks.
local M = {}

function M.master(proof_file, sidecar)
  require("gateway.decision_key").init()
  require("gateway.proof").load(proof_file)
  if sidecar then
    require("gateway.sidecar.address").resolve_at_start(sidecar)
  end
  require("gateway.access")
  require("gateway.budget")
  require("gateway.key_records")
  require("gateway.control")
  require("gateway.console")
  require("gateway.metrics")
end

return M
