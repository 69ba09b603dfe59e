#!/bin/bash
# Entrypoint of the proxy image. With the default command (nginx) it
#   1. completes the configuration directory: `gateway-config ensure` writes only what is
#      missing (default.conf, ssl.conf, a unique self-signed certificate on first start) and
#      never overwrites a file the operator supplied;
#   2. checks it: `gateway-config check` (settings, certificate/key match, CN/SAN, expiry, nginx -t);
#   3. replaces itself with nginx in the foreground, so nginx gets the container's signals.
# Any other command runs as given, e.g. `docker compose run --rm proxy gateway-config render /tmp/x`.
#
# The generator is /app/dist/generator/cli.js (wrapper: /usr/local/bin/gateway-config); it finds
# its templates in /app/templates by walking up from its own file to /app/package.json
# (generator/package-root.ts). It reads GATEWAY_FQDN, GATEWAY_APP_UPSTREAM,
# GATEWAY_SIDECAR_UPSTREAM, GATEWAY_HTTPS_PORT and GATEWAY_SETTINGS from the environment.
set -euo pipefail

CONFIG_DIR="${GATEWAY_CONFIG_DIR:-/etc/config}"

log() { printf 'proxy-entrypoint: %s\n' "$*" >&2; }

if [[ "${1:-}" != nginx ]]; then
  exec "$@"
fi

if [[ ! -f /app/dist/generator/cli.js ]]; then
  log "the configuration generator is missing (/app/dist/generator/cli.js): image built without it"
  exit 1
fi

mkdir -p "$CONFIG_DIR"
gateway-config ensure "$CONFIG_DIR"
gateway-config check "$CONFIG_DIR"

# TODO(lead, issue 6): the main nginx.conf. The generator is to render it from its own template
# (templates/nginx.conf.hbs: `daemon`/`pid`, `error_log stderr`, `access_log /dev/stdout`,
# `user nobody` or www-data for the workers, `include <CONFIG_DIR>/nginx/conf.d/*.conf`). When its
# CLI has a command for it, render it here to a file outside the mounted directory, e.g.
#   gateway-config render-main "$CONFIG_DIR" >/etc/nginx/nginx.conf     (name to be settled)
# and keep NGINX_MAIN_CONF pointing at it. Until then Debian's /etc/nginx/nginx.conf is used,
# which does not include the mounted directory: nginx starts but does not serve the gateway.
NGINX_MAIN_CONF="${NGINX_MAIN_CONF:-/etc/nginx/nginx.conf}"

log "starting nginx with ${NGINX_MAIN_CONF}"
exec "$@" -c "$NGINX_MAIN_CONF"
