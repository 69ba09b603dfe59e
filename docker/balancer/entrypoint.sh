#!/bin/bash
# Entrypoint of the balancer image (docker-compose.replicas.yml). With the default command it
# writes HAProxy's configuration: haproxy.cfg of this folder plus one `server` line per pair
# named in BALANCER_SERVERS ("pair-1:443 pair-2:443 ..."), waits for the pairs' certificate
# (the first proxy writes it into the shared /etc/config on its first start), checks the result
# with `haproxy -c` and becomes HAProxy (master-worker, PID 1, SIGUSR1: soft stop). Any other
# command runs as given, e.g. `docker compose exec balancer balancer-ctl "show stat"`.
set -euo pipefail

if [[ "${1:-}" != haproxy ]]; then exec "$@"; fi

log() { printf 'balancer: %s\n' "$*" >&2; }
die() {
  log "$*"
  exit 1
}

TEMPLATE=/usr/local/share/gateway-balancer/haproxy.cfg
CONFIG=/run/haproxy/haproxy.cfg
CERT=/etc/config/nginx/ssl/nginx.crt
WAIT_SECONDS="${BALANCER_CERT_WAIT_SECONDS:-120}"
export PAIR_READY_PORT="${PAIR_READY_PORT:-9464}" GATEWAY_FQDN="${GATEWAY_FQDN:-localhost}"

# Every value pasted into the configuration is checked first: host names and ports only.
read -r -a servers <<<"${BALANCER_SERVERS:-}"
((${#servers[@]} > 0)) || die 'BALANCER_SERVERS is empty: name the pairs, e.g. "pair-1:443 pair-2:443"'
for server in "${servers[@]}"; do
  [[ "$server" =~ ^[A-Za-z0-9]([A-Za-z0-9.-]{0,252})?:[0-9]{1,5}$ ]] ||
    die "BALANCER_SERVERS: \"${server}\" is not host:port (letters, digits, dots, hyphens)"
done
[[ "$PAIR_READY_PORT" =~ ^[0-9]{1,5}$ ]] || die "PAIR_READY_PORT: \"${PAIR_READY_PORT}\" is not a port"
[[ "$GATEWAY_FQDN" =~ ^[A-Za-z0-9]([A-Za-z0-9.-]{0,252})?$ ]] ||
  die "GATEWAY_FQDN: \"${GATEWAY_FQDN}\" is not a host name"

for ((waited = 0; ; waited++)); do
  [[ -s "$CERT" && -s "${CERT%.crt}.key" ]] && break
  ((waited < WAIT_SECONDS)) || die "no certificate at ${CERT} after ${WAIT_SECONDS} s (is /etc/config shared with the proxies?)"
  ((waited % 10 == 0)) && log "waiting for ${CERT} (written by the first proxy's start)"
  sleep 1
done

mkdir -p /run/haproxy
{
  cat "$TEMPLATE"
  for server in "${servers[@]}"; do
    name="${server%:*}"
    printf '    server %s %s\n' "$name" "$server"
  done
} >"$CONFIG"
haproxy -c -q -f "$CONFIG" || die "the generated configuration ${CONFIG} does not check"
log "balancing over ${servers[*]} (ready check: port ${PAIR_READY_PORT} /readyz)"
exec haproxy -W -db -f "$CONFIG"
