#!/usr/bin/env bash
# Restarts the pairs of docker-compose.replicas.yml one at a time without failing a request:
# after a new image (`... pull` or `... build`) or an edit of /etc/config (default.conf, the
# certificate is the balancer's too: restart it after). For each pair N:
#   1. the balancer drains pair-N (no new request goes there) and waits until the requests it
#      has there are answered;
#   2. takes it out (maintenance: no health checks while it is replaced);
#   3. recreates proxy-N and gateway-N (nginx quits after its requests, the sidecar closes
#      its listener after its answers);
#   4. waits until the pair answers its /readyz (sidecar, database and nginx) from the
#      balancer's side, then puts it back in service, and goes on with the next pair.
#
#   docker/rolling-restart.sh [PAIR...]          # default: every pair the balancer knows
#
# COMPOSE: the compose command with its arguments (default: `docker compose` when Compose v2
# answers, else `docker-compose`, with -f docker-compose.replicas.yml). DRAIN_TIMEOUT_SECONDS
# (30): longest wait for a pair's requests; READY_TIMEOUT_SECONDS (120): for a new pair.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DRAIN_TIMEOUT_SECONDS="${DRAIN_TIMEOUT_SECONDS:-30}"
READY_TIMEOUT_SECONDS="${READY_TIMEOUT_SECONDS:-120}"
if [[ -z "${COMPOSE:-}" ]]; then
  if docker compose version >/dev/null 2>&1; then COMPOSE="docker compose"; else COMPOSE="docker-compose"; fi
  COMPOSE="${COMPOSE} -f ${ROOT}/docker-compose.replicas.yml"
fi
read -r -a compose <<<"$COMPOSE"

log() { printf 'rolling-restart: %s\n' "$*" >&2; }
die() {
  log "$*"
  exit 1
}
ctl() { "${compose[@]}" exec -T balancer balancer-ctl "$@"; }
# One field of the pairs backend's row for server $1 in `show stat` (CSV; columns by header).
stat_field() {
  ctl "show stat" | awk -F, -v srv="$1" -v col="$2" '
    NR == 1 { sub(/^# /, ""); for (i = 1; i <= NF; i++) idx[$i] = i; next }
    $1 == "pairs" && $2 == srv { print $idx[col] }'
}
# The pair's /readyz, asked from the balancer's container as HAProxy's check asks it.
ready_from_balancer() {
  "${compose[@]}" exec -T balancer bash -c \
    "exec 3<>/dev/tcp/$1/\${PAIR_READY_PORT:-9464} && printf 'GET /readyz HTTP/1.0\r\n\r\n' >&3 && head -n 1 <&3 | grep -q ' 200 '" \
    >/dev/null 2>&1
}

pairs=("$@")
if ((${#pairs[@]} == 0)); then
  mapfile -t pairs < <(ctl "show stat" | awk -F, '$1 == "pairs" && $2 != "BACKEND" { print $2 }')
fi
((${#pairs[@]} > 0)) || die "the balancer names no pair (is the replicated composition running?)"

for pair in "${pairs[@]}"; do
  [[ "$pair" =~ ^pair-([0-9]+)$ ]] || die "\"${pair}\" is not a pair name (pair-N)"
  n="${BASH_REMATCH[1]}"
  t0=$(date +%s)
  log "${pair}: draining"
  ctl "set server pairs/${pair} state drain" >/dev/null
  for ((i = 0; ; i++)); do
    current="$(stat_field "$pair" scur)"
    [[ "$current" == 0 ]] && break
    ((i < DRAIN_TIMEOUT_SECONDS * 5)) || {
      log "${pair}: ${current} requests still there after ${DRAIN_TIMEOUT_SECONDS} s; going on"
      break
    }
    sleep 0.2
  done
  ctl "set server pairs/${pair} state maint" >/dev/null
  log "${pair}: out of service; recreating proxy-${n} and gateway-${n}"
  "${compose[@]}" up -d --no-deps --force-recreate "gateway-${n}" "proxy-${n}" >&2
  for ((i = 0; ; i++)); do
    ready_from_balancer "$pair" && break
    ((i < READY_TIMEOUT_SECONDS * 2)) || die "${pair}: not ready after ${READY_TIMEOUT_SECONDS} s; it stays out of service"
    sleep 0.5
  done
  ctl "set server pairs/${pair} state ready" >/dev/null
  for ((i = 0; ; i++)); do
    [[ "$(stat_field "$pair" status)" == UP ]] && break
    ((i < 60)) || die "${pair}: the balancer does not see it UP"
    sleep 0.5
  done
  log "${pair}: back in service after $(($(date +%s) - t0)) s"
done
log "done: ${pairs[*]}"
