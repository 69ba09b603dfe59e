#!/bin/bash
# pair-holder NAME: the process of a replicas pair's holder (docker-compose.replicas.yml). It
# keeps the pair's network namespace, which proxy-N and gateway-N join, and makes sure that the
# namespace's first DNS server is one that knows NAME (`database`): the sidecar finds
# PostgreSQL through the C library, which asks only the first server listed in
# /etc/resolv.conf and stops at its "no such name".
#
# Why: a holder is on two networks (`back` with the database, `front` with the application).
# Docker's resolver, aardvark-dns and Kubernetes answer for every network of a container, and
# this script then has nothing to do. Podman's CNI dnsname plugin (docker/setup-podman.sh)
# runs one dnsmasq per network and lists them all in the namespace's /etc/resolv.conf, in an
# order that changes from one container to the next (not the order of `networks:`; seen with
# podman 4.3: some pairs got `front` first, their sidecar never found `database` and the pair
# never became ready). The proxy's names on the other network (`app`) are docker/proxy-hosts.mjs's.
#
# While NAME does not resolve, each listed server is tried first in turn (the file rewritten in
# place: the engine mounts it, and the proxy and the gateway of the pair see the same file);
# the first order in which NAME resolves is kept, otherwise the file is left as it was. Once
# NAME has resolved, the file is only looked at again if someone else rewrites it (a network
# connected later): a database that is merely stopped never reorders anything.
# PAIR_RESOLV_FILE and PAIR_LOOKUP (a command given the name) are for tests.
set -uo pipefail

name="${1:-database}"
file="${PAIR_RESOLV_FILE:-/etc/resolv.conf}"
interval="${PAIR_HOLDER_INTERVAL:-1}"
log() { printf 'pair-holder: %s\n' "$*" >&2; }
resolves() {
  if [[ -n "${PAIR_LOOKUP:-}" ]]; then $PAIR_LOOKUP "$name" >/dev/null 2>&1; else getent ahostsv4 "$name" >/dev/null 2>&1; fi
}

# $2 (the file's text) with nameserver $1 moved before the others, every other line in place.
first() {
  local server="$1" line done=false
  while IFS= read -r line; do
    if [[ "$line" =~ ^nameserver[[:space:]]+([^[:space:]]+) ]]; then
      if ! $done; then
        printf 'nameserver %s\n' "$server"
        done=true
      fi
      [[ "${BASH_REMATCH[1]}" == "$server" ]] && continue
    fi
    printf '%s\n' "$line"
  done <<<"$2"
}

settle() {
  local original servers server
  original="$(cat "$file" 2>/dev/null)" || return 1
  resolves && return 0
  mapfile -t servers < <(sed -n 's/^nameserver[[:space:]]\{1,\}\([^[:space:]]\{1,\}\).*/\1/p' <<<"$original")
  ((${#servers[@]} > 1)) || return 1
  for server in "${servers[@]:1}"; do
    first "$server" "$original" >"$file" || break
    if resolves; then
      log "${name} is known to DNS server ${server} only: listed it first in ${file}"
      return 0
    fi
  done
  printf '%s\n' "$original" >"$file"
  return 1
}

settled=""
trap 'exit 0' TERM INT
while :; do
  current="$(cat "$file" 2>/dev/null || true)"
  if [[ -z "$settled" || "$current" != "$settled" ]]; then
    if settle; then settled="$(cat "$file" 2>/dev/null || true)"; else settled=""; fi
  fi
  sleep "$interval" &
  wait $! || true
done
