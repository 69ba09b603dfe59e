#!/bin/bash
# Entrypoint of the proxy image. With the default command (nginx) it
#   1. completes /etc/config: `gateway-config ensure` writes only what is missing (default.conf,
#      ssl.conf, a unique self-signed certificate on first start), never overwriting a file;
#   2. checks it: `gateway-config check` (settings, certificate/key match, CN/SAN, expiry, nginx -t);
#   3. writes the main nginx.conf into a runtime directory outside the mounted one
#      (`gateway-config main-conf`: pid, temp paths, logs to stderr/stdout, workers as www-data,
#      `include /etc/config/nginx/conf.d/*.conf`);
#   4. replaces itself with nginx (the template says `daemon off;`), so nginx gets the signals.
# Any other command runs as given, e.g. `docker compose run --rm proxy gateway-config --help`.
#
# The generator is /app/dist/generator/cli.js (wrapper: /usr/local/bin/gateway-config); it finds
# its templates in /app/templates by walking up from its own file to /app/package.json
# (generator/package-root.ts). It reads GATEWAY_FQDN, GATEWAY_HTTPS_PORT, GATEWAY_APP_UPSTREAM,
# GATEWAY_SIDECAR_UPSTREAM and GATEWAY_SETTINGS from the environment; these only shape files
# that `ensure` creates, so a file already in /etc/config keeps what it says.
set -euo pipefail

CONFIG_DIR=/etc/config # the spec's path; config_dir in the settings defaults to it
RUNTIME_DIR="${GATEWAY_RUNTIME_DIR:-/run/gateway}"
NGINX_WORKER_USER="${NGINX_WORKER_USER:-www-data}"

log() { printf 'proxy-entrypoint: %s\n' "$*" >&2; }

if [[ "${1:-}" != nginx ]]; then
  exec "$@"
fi

mkdir -p "$CONFIG_DIR"
gateway-config ensure "$CONFIG_DIR"
gateway-config check "$CONFIG_DIR"
gateway-config main-conf "$RUNTIME_DIR" --error-log stderr --access-log stdout \
  --user "$NGINX_WORKER_USER" >/dev/null

log "starting nginx with ${RUNTIME_DIR}/nginx.conf"
exec "$@" -p "${RUNTIME_DIR}/" -c "${RUNTIME_DIR}/nginx.conf" -e stderr
