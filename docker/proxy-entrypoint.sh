#!/bin/bash
# Entrypoint of the proxy image. With the default command (nginx) it
#   1. completes /etc/config: `gateway-config ensure` writes only what is missing (default.conf,
#      ssl.conf, a unique self-signed certificate on first start), never overwriting a file;
#   2. checks it: `gateway-config check` (settings, certificate/key match, CN/SAN, expiry, nginx -t);
#   3. writes the main nginx.conf into a runtime directory outside the mounted one
#      (`gateway-config main-conf`: pid, temp paths, logs to stderr/stdout, workers as www-data,
#      `include /etc/config/nginx/conf.d/*.conf`);
#   4. starts a small loop in the background that reloads nginx when the address of an upstream
#      host changes (below), and replaces itself with nginx (the template says `daemon off;`),
#      so nginx is PID 1 and gets the container's signals.
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
RECHECK_SECONDS="${GATEWAY_UPSTREAM_RECHECK_SECONDS:-5}"

log() { printf 'proxy-entrypoint: %s\n' "$*" >&2; }

if [[ "${1:-}" != nginx ]]; then
  exec "$@"
fi

mkdir -p "$CONFIG_DIR"
# nginx's control socket (auth_cache.control_socket in default.conf) lives in a volume shared
# with the gateway container, which invalidates cached decisions through it (compose mounts
# gateway-control at /run/gateway-control in both). nginx binds it as root, mode 0666; the
# check below (nginx -t) binds it too, so the folder must exist first.
mkdir -p /run/gateway-control
# What `ensure` creates belongs to whoever owns the mounted directory (a bind mount of an
# operator's folder, say uid 1000), so that they can edit it afterwards; files already there
# keep their owner. In a named volume (owned by root) nothing changes.
existing="$(find "$CONFIG_DIR" -print | sort)"
gateway-config ensure "$CONFIG_DIR"
config_owner="$(stat -c %u:%g "$CONFIG_DIR")"
if [[ "$config_owner" != 0:0 ]]; then
  comm -13 <(printf '%s\n' "$existing") <(find "$CONFIG_DIR" -print | sort) |
    while IFS= read -r created; do chown -h "$config_owner" "$created"; done
fi
gateway-config check "$CONFIG_DIR"

gateway-config main-conf "$RUNTIME_DIR" --error-log stderr --access-log stdout \
  --user "$NGINX_WORKER_USER" >/dev/null

# (A stopped upstream container never answers a connect; default.conf sets
# proxy_connect_timeout 2s, so callers get their 5xx at once rather than after 60 s.)

# nginx resolves an upstream's host name once, at start or reload. A recreated container
# (`docker compose up -d` after editing the gateway's environment, spec 5.2) gets a new
# address, and nginx would keep sending to the old one: every request fails until a restart.
# So: watch the upstream host names of the environment and reload nginx when they move.
# GATEWAY_UPSTREAM_RECHECK_SECONDS=0 turns this off (docs/decisions/20261122-containers-images.md).
upstream_hosts=()
for upstream in "${GATEWAY_SIDECAR_UPSTREAM:-}" "${GATEWAY_APP_UPSTREAM:-}"; do
  host="${upstream%:*}"
  case "$host" in
  '' | unix | \[*) ;;                     # unset, a Unix socket, an IPv6 literal
  *[!0-9.]*) upstream_hosts+=("$host") ;; # a name; an IPv4 literal never moves
  esac
done

addresses() {
  local host out
  for host in "${upstream_hosts[@]}"; do
    out="$(getent ahostsv4 "$host" | awk '{ print $1 }' | sort -u | paste -sd ' ')"
    [[ -n "$out" ]] || return 1 # not resolvable right now (being recreated): decide later
    printf '%s=%s\n' "$host" "$out"
  done
}

watch_upstreams() {
  local before now
  before="$(addresses || true)"
  while sleep "$RECHECK_SECONDS"; do
    now="$(addresses)" || continue
    if [[ "$now" != "$before" ]]; then
      log "upstream addresses changed ($(echo "$now" | paste -sd ' ')): reloading nginx"
      nginx -p "${RUNTIME_DIR}/" -c "${RUNTIME_DIR}/nginx.conf" -e stderr -s reload || true
      before="$now"
    fi
  done
}

if ((RECHECK_SECONDS > 0 && ${#upstream_hosts[@]} > 0)); then
  watch_upstreams &
fi

log "starting nginx with ${RUNTIME_DIR}/nginx.conf"
exec "$@" -p "${RUNTIME_DIR}/" -c "${RUNTIME_DIR}/nginx.conf" -e stderr
