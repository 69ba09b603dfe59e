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
  # No container runs without its conmon: then there is nothing to check, and no `podman ps`
  # (about 66 ms of CPU each; once a second that kept 0.07 cores of an idle 2-core machine
  # busy, under every benchmark run on it). pgrep costs a fifth of that.
  if ! pgrep -x conmon >/dev/null; then
    sleep 1
    continue
  fi
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
