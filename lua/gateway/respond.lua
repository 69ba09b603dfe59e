-- The gateway's own answers from Lua: JSON in the one error shape, never cached, never sniffed.
-- HSTS comes from default.conf's server-level add_header, which applies to these answers too.
local M = {}

-- Sends `body` (JSON text) with `status` and the given extra headers, and ends the request.
function M.json(status, body, headers)
  ngx.status = status
  ngx.header["Content-Type"] = "application/json"
  ngx.header["Cache-Control"] = "no-store"
  ngx.header["X-Content-Type-Options"] = "nosniff"
  if headers then
    for name, value in pairs(headers) do
      ngx.header[name] = value
    end
  end
  ngx.header["Content-Length"] = #body
  ngx.print(body)
  return ngx.exit(status)
end

-- Answers 200 with `data` (a table) as JSON: the control socket's reports to the sidecar.
function M.json_data(data)
  ngx.header["Content-Type"] = "application/json"
  ngx.header["Cache-Control"] = "no-store"
  -- cjson encodes an empty table as {}: an object either way.
  ngx.print(require("cjson.safe").encode(data))
end

-- Answers 200 with `text` as plain text: a control-socket report too large to build as JSON.
function M.text_data(text)
  ngx.header["Content-Type"] = "text/plain; charset=utf-8"
  ngx.header["Cache-Control"] = "no-store"
  ngx.print(text)
end

return M
