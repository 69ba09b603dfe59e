-- The browser console's location (docs/decisions/20261123-console.md). Switched on, its static
-- files (no data in them) are the one exception to "every request is authenticated", like any
-- sign-in page; switched off, the request goes to the app and is authenticated as usual.
local contract = require("gateway.contract")
local respond = require("gateway.respond")
local cjson = require("cjson.safe")

local M = {}

local names = contract.console
local NOT_ALLOWED = contract.answers.method_not_allowed

-- scheme://host[:port] of an http(s) URL, or "": the only part of the provider's address the
-- content security policy needs (the browser fetches its discovery and token endpoints).
local function origin_of(url)
  if type(url) ~= "string" then
    return ""
  end
  return url:match("^(https?://[%w%.%-%[%]:]+)") or ""
end

local function oidc_enabled(var)
  return var.open_id_connect_enabled == "true" and var[names.oidc_client_id_variable] ~= ""
end

-- Access phase of /console/: files only, read only; the switch is read on every request, so
-- an edited default.conf is followed after a reload.
function M.access()
  local var = ngx.var
  if var[names.enabled_variable] ~= "true" then
    return ngx.exec(names.off_location)
  end
  local method = ngx.req.get_method()
  if method ~= "GET" and method ~= "HEAD" then
    return respond.json(NOT_ALLOWED.status, NOT_ALLOWED.body, { Allow = "GET, HEAD" })
  end
  if oidc_enabled(var) then
    var[names.connect_origin_variable] = origin_of(var.oidc_discovery)
  end
end

-- /console/config.json: what the console needs to offer sign-in, from default.conf's own
-- settings (never a secret: the console is a public OAuth client).
function M.config()
  local var = ngx.var
  local oidc = cjson.null
  if oidc_enabled(var) then
    oidc = {
      discovery = var.oidc_discovery,
      client_id = var[names.oidc_client_id_variable],
      scope = var[names.oidc_scope_variable],
      redirect_uri = var.oidc_redirect_uri,
    }
  end
  local body = cjson.encode({ api_keys = var.api_keys_enabled == "true", oidc = oidc })
  ngx.header["Content-Type"] = "application/json"
  ngx.header["Content-Length"] = #body
  ngx.print(body)
end

return M
