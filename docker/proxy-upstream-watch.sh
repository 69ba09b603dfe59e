#!/bin/bash
# Started in the background by the proxy's entrypoint with nginx's arguments.
# nginx resolves an upstream's host name once, at start or reload. A recreated container
# (`docker compose up -d` after editing the gateway's environment, spec 5.2) gets a new
# address, and nginx would keep sending to the old one: every request fails until a restart.
# So: watch the upstream host names of the environment (GATEWAY_SIDECAR_UPSTREAM,
# GATEWAY_APP_UPSTREAM) and reload nginx when they move. GATEWAY_UPSTREAM_RECHECK_SECONDS=0
# turns this off (docs/decisions/20261122-containers-images.md).
set -uo pipefail

RECHECK_SECONDS="${GATEWAY_UPSTREAM_RECHECK_SECONDS:-5}"
nginx_args=("$@")
log() { printf 'proxy-upstream-watch: %s\n' "$*" >&2; }

upstream_hosts=()
for upstream in "${GATEWAY_SIDECAR_UPSTREAM:-}" "${GATEWAY_APP_UPSTREAM:-}"; do
  host="${upstream%:*}"
  case "$host" in
  '' | unix | \[*) ;;                     # unset, a Unix socket, an IPv6 literal
  *[!0-9.]*) upstream_hosts+=("$host") ;; # a name; an IPv4 literal never moves
  esac
done
((RECHECK_SECONDS > 0 && ${#upstream_hosts[@]} > 0)) || exit 0

addresses() {
  local host out
  for host in "${upstream_hosts[@]}"; do
    out="$(getent ahostsv4 "$host" | awk '{ print $1 }' | sort -u | paste -sd ' ')"
    [[ -n "$out" ]] || return 1 # not resolvable right now (being recreated): decide later
    printf '%s=%s\n' "$host" "$out"
  done
}

before="$(addresses || true)"
while sleep "$RECHECK_SECONDS"; do
  # Names kept in /etc/hosts by the entrypoint (docker/proxy-hosts.mjs) follow their containers.
  if grep -q '^# proxy-hosts:' /etc/hosts 2>/dev/null || ! addresses >/dev/null; then
    proxy-hosts "${upstream_hosts[@]}" || true
  fi
  now="$(addresses)" || continue
  if [[ "$now" != "$before" ]]; then
    log "upstream addresses changed ($(echo "$now" | paste -sd ' ')): reloading nginx"
    nginx "${nginx_args[@]}" -s reload || true
    before="$now"
  fi
done
