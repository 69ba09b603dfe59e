-- nginx's proof to the sidecar (docs/decisions/20261202-sidecar-trusts-only-nginx.md): the
-- per-install secret of contract.proof.file, read in the master at every start and reload
-- (before the workers fork, so workers never need to read the file), sent under
-- contract.proof.header with every question and every proxied management request. Its twins:
-- common/sidecar-proof.ts (the file's shape), sidecar/proof/ (the check).
local M = {}

local secret = nil

-- Pure: the secret in a proof file's text (64 lowercase hex digits, an optional line feed), or
-- nil.
function M.parse(text)
  if type(text) ~= "string" then
    return nil
  end
  local value = text:gsub("\n$", "", 1)
  if #value ~= 64 or value:find("[^0-9a-f]") then
    return nil
  end
  return value
end

-- Reads the secret from `path`. Without one nginx still starts, and every request is refused
-- as unavailable: the sidecar answers nothing unproven (fail closed), and the log says why.
function M.load(path)
  secret = nil
  local file, err = io.open(path, "r")
  if not file then
    ngx.log(ngx.ERR, "no proof for the sidecar, every request will be refused: ", err)
    return
  end
  local text = file:read("*a")
  file:close()
  secret = M.parse(text)
  if not secret then
    ngx.log(ngx.ERR, "the proof file ", path, " holds no secret (64 lowercase hex digits); ",
      "every request will be refused")
  end
end

-- The secret, or "" without one (nginx then sends no proof header at all).
function M.value()
  return secret or ""
end

return M
