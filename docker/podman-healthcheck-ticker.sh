#!/usr/bin/env bash
# Runs the health checks of running podman containers. podman schedules HEALTHCHECKs with
# systemd timers; without systemd (these machines) no check ever runs, a container stays
# "starting" forever, and `depends_on: condition: service_healthy` or testcontainers'
# Wait.forHealthCheck() wait forever. This loop stands in for the timers:
#   containers still "starting": checked every STARTING_EVERY seconds (default 1),
#   "healthy"/"unhealthy" ones:  every SETTLED_EVERY seconds (default 10).
# It ignores each image's --interval (the per-container timing is systemd's job) but not its
# retries or start period, which `podman healthcheck run` applies.
# docker/setup-podman.sh starts it in the background (pid in /run/podman/healthcheck-ticker.pid).
set -euo pipefail

STARTING_EVERY="${STARTING_EVERY:-1}"
SETTLED_EVERY="${SETTLED_EVERY:-10}"
declare -A last_run=()

while true; do
  now="$(date +%s)"
  while read -r id status; do
    [[ -n "$id" ]] || continue
    case "$status" in
    *'(starting)'*) every="$STARTING_EVERY" ;;
    *'(healthy)'* | *'(unhealthy)'*) every="$SETTLED_EVERY" ;;
    *) continue ;; # no health check
    esac
    if ((now - ${last_run[$id]:-0} >= every)); then
      last_run[$id]="$now"
      # </dev/null: `podman healthcheck run` reads its standard input, which here is the rest
      # of the `podman ps` list: without it one container was checked per pass, and with a
      # dozen running a starting one could wait minutes for its first check.
      podman healthcheck run "$id" </dev/null >/dev/null 2>&1 || true
    fi
  done < <(podman ps --format '{{.ID}} {{.Status}}' 2>/dev/null || true)
  sleep 1
done
